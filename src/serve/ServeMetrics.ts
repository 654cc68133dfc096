/** Upper bounds of the duration histogram, in seconds: from a cached answer to a long agent run. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

type Labels = Record<string, string>;

/**
 * The server's metrics in Prometheus' text format (`GET /metrics`), written by hand: a few counters, gauges and one
 * histogram do not need a client library (and its start-up cost). Label values are escaped as the format asks.
 */
export class ServeMetrics {
  readonly #requests = new Map<string, { labels: Labels; value: number }>();
  readonly #tokens = new Map<string, { labels: Labels; value: number }>();
  readonly #cost = new Map<string, { labels: Labels; value: number }>();
  readonly #durations = new Map<string, { labels: Labels; buckets: number[]; sum: number; count: number }>();
  readonly #gauges: () => { inFlight: number; waiting: number; paused: number };

  constructor(gauges: () => { inFlight: number; waiting: number; paused: number }) {
    this.#gauges = gauges;
  }

  /** A request answered: by route, model and HTTP status, and how long it took. */
  request(labels: { route: string; model: string; status: number }, seconds: number): void {
    add(this.#requests, { route: labels.route, model: labels.model, status: String(labels.status) }, 1);
    const key = keyOf({ route: labels.route, model: labels.model });
    let histogram = this.#durations.get(key);
    if (!histogram) this.#durations.set(key, (histogram = { labels: { route: labels.route, model: labels.model }, buckets: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 }));
    DURATION_BUCKETS.forEach((bound, index) => {
      if (seconds <= bound) histogram.buckets[index]! += 1;
    });
    histogram.sum += seconds;
    histogram.count += 1;
  }

  /** What a run spent (counted once, when it ends): tokens by kind, and US dollars when its models are priced. */
  spent(model: string, usage: { promptTokens: number; completionTokens: number }, cost: number | null): void {
    add(this.#tokens, { model, kind: "prompt" }, usage.promptTokens);
    add(this.#tokens, { model, kind: "completion" }, usage.completionTokens);
    if (cost !== null) add(this.#cost, { model }, cost);
  }

  /** The exposition text; with `queue`, the pool's gauges too (`lllm serve --queue`). */
  text(queue?: { waiting: number; active: number; workers: number }): string {
    const lines: string[] = [];
    const family = (name: string, type: string, help: string, samples: Array<{ labels: Labels; value: number }>, suffix = ""): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const sample of samples) lines.push(`${name}${suffix}${labelText(sample.labels)} ${sample.value}`);
    };
    family("lllm_serve_requests_total", "counter", "Requests answered, by route, model and HTTP status.", [...this.#requests.values()]);
    const gauges = this.#gauges();
    family("lllm_serve_runs_in_flight", "gauge", "Runs running now.", [{ labels: {}, value: gauges.inFlight }]);
    family("lllm_serve_requests_waiting", "gauge", "Requests waiting for a place to run (--concurrency).", [{ labels: {}, value: gauges.waiting }]);
    family("lllm_serve_runs_paused", "gauge", "Runs waiting for a client's tool results.", [{ labels: {}, value: gauges.paused }]);
    if (queue) {
      family("lllm_serve_queue_jobs", "gauge", "Requests on the queue, by state: waiting for a worker, or running on one (--queue).", [
        { labels: { state: "waiting" }, value: queue.waiting },
        { labels: { state: "active" }, value: queue.active },
      ]);
      family("lllm_serve_queue_workers", "gauge", "Workers of the queue whose heartbeat is live (--queue).", [{ labels: {}, value: queue.workers }]);
    }
    family("lllm_serve_tokens_total", "counter", "Tokens of the runs that ended, by model and kind (prompt, completion).", [...this.#tokens.values()]);
    family("lllm_serve_cost_usd_total", "counter", "US dollars spent by the runs that ended, by model (priced models only).", [...this.#cost.values()]);
    lines.push("# HELP lllm_serve_request_duration_seconds Time from a request's arrival to its answer's end, by route and model.", "# TYPE lllm_serve_request_duration_seconds histogram");
    for (const histogram of this.#durations.values()) {
      DURATION_BUCKETS.forEach((bound, index) => lines.push(`lllm_serve_request_duration_seconds_bucket${labelText({ ...histogram.labels, le: String(bound) })} ${histogram.buckets[index]}`));
      lines.push(`lllm_serve_request_duration_seconds_bucket${labelText({ ...histogram.labels, le: "+Inf" })} ${histogram.count}`);
      lines.push(`lllm_serve_request_duration_seconds_sum${labelText(histogram.labels)} ${histogram.sum}`);
      lines.push(`lllm_serve_request_duration_seconds_count${labelText(histogram.labels)} ${histogram.count}`);
    }
    return `${lines.join("\n")}\n`;
  }
}

function add(map: Map<string, { labels: Labels; value: number }>, labels: Labels, value: number): void {
  const key = keyOf(labels);
  const sample = map.get(key);
  if (sample) sample.value += value;
  else map.set(key, { labels, value });
}

function keyOf(labels: Labels): string {
  return JSON.stringify(labels);
}

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  return `{${entries.map(([name, value]) => `${name}="${value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')}"`).join(",")}}`;
}
