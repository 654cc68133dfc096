/**
 * The run half of the viewer page's script (see viewerListScript.ts for the rules of the string): one run as its
 * input and answer, a timeline of its model calls (each named by its agent), tool calls and programs, the step a
 * click opens, and each program the model wrote with its bridged calls and what it gave back.
 */
export const VIEWER_RUN_SCRIPT = `
let runShown = null;
async function loadRun(id) {
  runShown = id;
  const detail = $("detail");
  detail.replaceChildren(el("p", { class: "empty" }, "Loading run " + id + "…"));
  let run;
  try {
    const response = await fetch("/api/runs/" + encodeURIComponent(id));
    run = await response.json();
    if (!response.ok) throw new Error(run.error || response.statusText);
  } catch (error) {
    if (runShown === id) detail.replaceChildren(el("p", { class: "problem" }, error.message));
    return;
  }
  if (runShown !== id) return;
  document.title = (run.tactic_name || "run") + " · " + run.status + " · lllm runs";
  detail.replaceChildren(...runView(run));
  detail.scrollTo(0, 0);
}

function batchLink(batch) {
  return el("a", { href: address(null, new URLSearchParams({ batch })), title: "only this batch's runs", onclick: (event) => {
    event.preventDefault();
    const params = listParams();
    params.set("batch", batch);
    params.delete("before");
    params.delete("after");
    go(runOfPath(), params);
  } }, batch);
}

function runLink(id) {
  return el("a", { href: address(id, listParams()), onclick: (event) => { event.preventDefault(); go(id, listParams()); } }, id);
}

function runView(run) {
  const extra = [run.cached_prompt_tokens ? run.cached_prompt_tokens + " cached" : "", run.reasoning_tokens ? run.reasoning_tokens + " reasoning" : ""].filter(Boolean);
  const meta = [
    el("a", { href: address(run.id, new URLSearchParams()), id: "run-link", title: "this run's link" }, run.id), " · " + fullTime(run.started_at) + " · " + duration(run.duration_ms),
    " · " + run.prompt_tokens + " + " + run.completion_tokens + " tokens" + (extra.length ? " (" + extra.join(", ") + ")" : "") + " · " + (run.cost === null ? "cost unknown" : cost(run.cost)) + " · " + plural(run.llm_calls, "model call"),
    run.exit_code !== null ? " · exit " + run.exit_code : "",
  ];
  const more = [
    el("span", {}, "models " + (run.models.join(", ") || "-")),
    run.batch_id ? el("span", {}, " · batch ", batchLink(run.batch_id)) : null,
    run.test_case !== null ? el("span", { id: "run-test" }, " · test case ", el("span", { class: "test " + (run.test_status || "undecided") }, run.test_case + " " + (run.test_status || "(not decided)")), " of " + (run.test_file || "?")) : null,
    run.continues_run ? el("span", {}, " · continues ", runLink(run.continues_run)) : null,
    run.served ? el("span", { id: "run-served" }, " · served: " + run.served.route + " as model " + run.served.model + (run.served.client && run.served.client.user ? " for " + run.served.client.user : "") + (run.served.response_id ? " · " + run.served.response_id : "")) : null,
    run.parent_run ? el("span", {}, " · inside ", runLink(run.parent_run)) : null,
    (run.attempts || []).length ? el("span", { id: "run-resumed" }, " · resumed " + plural(run.attempts.length, "time") + " (lllm run --resume)") : null,
    Object.keys(run.vars || {}).length ? el("span", {}, " · vars " + Object.entries(run.vars).map(([key, value]) => key + "=" + value).join(" ")) : null,
  ];
  const outcome = run.error_message !== null
    ? [el("div", { class: "section" }, "error", run.error_code ? el("span", { class: "name" }, " · " + run.error_code) : null), el("pre", { id: "run-error", class: "error" }, run.error_message)]
    : run.status === "ok"
      ? [el("div", { class: "section" }, "output"), el("pre", { id: "run-output" }, typeof run.output === "string" ? run.output : JSON.stringify(run.output, null, 2))]
      : [el("div", { class: "section" }, "outcome"), el("pre", {}, run.status === "running" ? "still running" : run.status === "crashed" ? "crashed: the process ended without recording an outcome" : run.status)];
  if (run.resumable) outcome.push(el("p", { id: "run-resumable", class: "meta" }, "It stopped before its end; go on from where it stopped with: lllm run --resume " + run.id));
  const programs = programsOf(run);
  const steps = timelineSteps(run, programs);
  const panel = el("div", { class: "panel", id: "step-detail" }, el("p", { class: "empty" }, steps.length ? "Click a step to see its messages, arguments and results." : "This run made no model or tool call."));
  return [
    el("h2", {}, (run.tactic_name || "run") + " · ", el("span", { class: "status " + run.status }, run.status)),
    el("div", { class: "meta" }, ...meta),
    el("div", { class: "meta" }, ...more),
    el("div", { class: "section" }, "input"), el("pre", { id: "run-input" }, run.input || ""),
    ...outcome,
    el("div", { class: "section" }, "timeline · " + plural(steps.length, "step")),
    steps.length ? el("div", { class: "legend" }, el("span", { style: { "--swatch": "var(--model)" } }, "model call"), el("span", { style: { "--swatch": "var(--tool)" } }, "tool call"), el("span", { style: { "--swatch": "var(--program)" } }, "program"), el("span", { style: { "--swatch": "var(--error)" } }, "failed")) : null,
    steps.length ? timeline(run, steps, panel) : null,
    panel,
    programs.length ? el("div", { class: "section" }, plural(programs.length, "program")) : null,
    ...programs.map((entry) => programView(run, entry)),
    ...artifactsView(run),
  ].filter(Boolean);
}

// Programs: a code-action run's attempts, and each tool_chain call's program (with the call that ran it).
function programsOf(run) {
  const details = run.details || {};
  const list = [];
  const codeAction = details.code_action && Array.isArray(details.code_action.programs) ? details.code_action.programs : [];
  codeAction.forEach((program, index) => list.push({ source: "code_action", number: list.length + 1, program, anchor: run.model_calls[(program.attempt || index + 1) - 1] || null, last: index === codeAction.length - 1 }));
  const chainCalls = run.tool_calls.filter((call) => call.name === "tool_chain");
  (Array.isArray(details.tool_chains) ? details.tool_chains : []).forEach((program, index) => list.push({ source: "tool_chain", number: list.length + 1, program, anchor: chainCalls[index] || null }));
  return list;
}

function timelineSteps(run, programs) {
  const steps = [
    ...run.model_calls.map((call) => ({ kind: "model", order: call.step, start: call.started_at, ms: call.latency_ms || 0, call, failed: false })),
    ...run.tool_calls.map((call) => ({ kind: "tool", order: call.step, start: call.ended_at - (call.duration_ms || 0), ms: call.duration_ms || 0, call, failed: call.status === "error" })),
    // Where each later attempt began (lllm run --resume): the steps before it were replayed from the journal.
    ...(run.attempts || []).map((attempt) => ({ kind: "resume", order: attempt.step - 0.5, start: attempt.started_at, ms: 0, attempt, failed: false })),
  ].sort((a, b) => a.order - b.order);
  const result = [];
  const placed = new Set();
  for (const step of steps) {
    result.push(step);
    for (const entry of programs) {
      if (entry.anchor !== step.call) continue;
      placed.add(entry);
      // A code-action program runs after the model call that wrote it; a tool chain's, inside its tool call.
      const start = entry.source === "code_action" ? step.start + step.ms : step.start;
      result.push({ kind: "program", start, ms: entry.program.duration_ms || 0, entry, nested: entry.source === "tool_chain", failed: entry.program.status !== "ok" });
    }
  }
  for (const entry of programs) {
    if (placed.has(entry)) continue;
    const last = result[result.length - 1];
    const start = last ? last.start + last.ms : run.started_at;
    result.push({ kind: "program", start, ms: entry.program.duration_ms || 0, entry, failed: entry.program.status !== "ok" });
  }
  return result;
}

function stepLabel(step) {
  if (step.kind === "resume") return [el("span", { class: "kind" }, "resumed"), " attempt " + step.attempt.attempt + " · " + fullTime(step.attempt.started_at)];
  if (step.kind === "model") return [el("span", { class: "kind" }, "chat"), " " + step.call.agent + " · " + (step.call.model || "?") + " · " + count(tokensOf(step.call)) + " tokens"];
  if (step.kind === "tool") return [el("span", { class: "kind" }, "tool"), " " + step.call.name + " · " + step.call.agent + (step.call.status !== "ok" ? " · " + step.call.status : "")];
  const program = step.entry.program;
  return [el("span", { class: "kind" }, "program " + step.entry.number), " " + (step.entry.source === "tool_chain" ? "tool chain · " : "attempt " + (program.attempt || step.entry.number) + " · ") + program.status + " · " + plural(program.tool_calls || 0, "call")];
}

function timeline(run, steps, panel) {
  const origin = Math.min(run.started_at, ...steps.map((step) => step.start));
  const end = Math.max(run.ended_at || 0, ...steps.map((step) => step.start + step.ms), origin + 1);
  const span = end - origin;
  return el("div", { class: "timeline", id: "timeline" }, ...steps.map((step, index) => {
    const width = Math.max(0.3, (step.ms / span) * 100);
    const left = Math.min(Math.max(0, ((step.start - origin) / span) * 100), 100 - width);
    const label = stepLabel(step);
    if (step.kind === "resume") return el("div", { class: "step resume", "data-kind": "resume", "data-index": String(index), title: label.map((part) => typeof part === "string" ? part : part.textContent).join(""), onclick: () => showStep(run, panel, step) }, el("div", { class: "label" }, el("span", { class: "text" }, ...label)));
    const title = label.map((part) => typeof part === "string" ? part : part.textContent).join("") + " · " + duration(step.ms);
    return el("div", { class: "step " + step.kind + (step.failed ? " failed" : "") + (step.nested ? " nested" : ""), "data-kind": step.kind, "data-index": String(index), title, onclick: (event) => {
      for (const node of document.querySelectorAll("#timeline .step.active")) node.classList.remove("active");
      event.currentTarget.classList.add("active");
      showStep(run, panel, step);
    } },
      el("div", { class: "label" }, el("span", { class: "text" }, ...label), el("span", { class: "time" }, duration(step.ms))),
      el("div", { class: "track" }, el("div", { class: "bar", style: { left: left + "%", width: width + "%" } })));
  }));
}

function messageBlock(message) {
  const asks = (message.toolCalls || []).map((call) => call.name + "(" + call.arguments + ")").join("\\n");
  return [el("div", { class: "role" }, message.role, message.name ? el("span", { class: "name" }, " · " + message.name) : null), el("pre", {}, [message.content, asks, ...(message.media || [])].filter(Boolean).join("\\n") || "")];
}

function showStep(run, panel, step) {
  if (step.kind === "resume") {
    panel.replaceChildren(el("h3", {}, "Resumed · attempt " + step.attempt.attempt), el("p", {}, "The run was resumed here (lllm run --resume) at " + fullTime(step.attempt.started_at) + ": the steps before were replayed from its journal, without calling the model or the tools again; the steps after ran live."));
    return;
  }
  if (step.kind === "program") {
    const target = $("program-" + step.entry.number);
    for (const node of document.querySelectorAll(".panel.highlight")) node.classList.remove("highlight");
    target.classList.add("highlight");
    target.scrollIntoView({ block: "start", inline: "nearest" });
    return;
  }
  const call = step.call;
  if (step.kind === "model") {
    // What is new since this agent's previous call comes first; what it was sent before stays folded.
    const previous = run.model_calls.filter((other) => other.agent === call.agent && other.seq < call.seq).pop();
    // The messages both start with (two copies of one agent at once share only their start).
    let seen = 0;
    while (previous && seen < previous.messages.length && seen < call.messages.length && JSON.stringify(previous.messages[seen]) === JSON.stringify(call.messages[seen])) seen += 1;
    const earlier = call.messages.slice(0, seen);
    panel.replaceChildren(...[el("h3", {}, "Model call " + (call.seq + 1) + " · " + call.agent + " · round " + (call.round + 1)),
      el("div", { class: "meta" }, (call.model || "?") + " · " + duration(call.latency_ms) + " · " + call.prompt_tokens + " + " + call.completion_tokens + " tokens · " + (call.cost === null ? "cost unknown" : cost(call.cost)) + (call.finish_reason ? " · " + call.finish_reason : "")),
      ...(call.retries || []).map((retry) => el("div", { class: "meta" }, "attempt " + retry.attempt + " failed (" + retry.cause + "); tried again after " + duration(retry.wait_ms))),
      earlier.length ? el("details", {}, el("summary", {}, plural(earlier.length, "earlier message") + " (sent before, in call " + (previous.seq + 1) + ")"), ...earlier.flatMap(messageBlock)) : null,
      ...call.messages.slice(seen).flatMap(messageBlock),
      el("div", { class: "role" }, "reply"), el("pre", { id: "model-reply" }, [call.reply, (call.tool_calls || []).map((request) => request.name + "(" + request.arguments + ")").join("\\n")].filter(Boolean).join("\\n"))].filter(Boolean));
  } else {
    panel.replaceChildren(el("h3", {}, "Tool " + call.name + " · " + call.agent + " · ", el("span", { class: "status " + call.status }, call.status), " · " + duration(call.duration_ms)),
      el("div", { class: "role" }, "arguments"), el("pre", { id: "tool-arguments" }, JSON.stringify(call.arguments, null, 2)),
      el("div", { class: "role" }, call.error ? "error" : "result"), el("pre", { id: "tool-result", class: call.error ? "error" : "" }, call.error || call.result || ""));
  }
}

function programView(run, entry) {
  const program = entry.program;
  const calls = Array.isArray(program.calls) ? program.calls : [];
  const tally = {};
  for (const call of calls) tally[call.tool] = (tally[call.tool] || 0) + 1;
  let output = null;
  if (program.error) output = [el("div", { class: "role" }, "error"), el("pre", { class: "error program-output" }, program.error)];
  else if (entry.source === "tool_chain" && entry.anchor) output = [el("div", { class: "role" }, "result"), el("pre", { class: "program-output" }, entry.anchor.error || entry.anchor.result || "")];
  else if (entry.source === "code_action" && program.status === "ok" && entry.last && run.status === "ok") output = [el("div", { class: "role" }, "final answer"), el("pre", { class: "program-output" }, typeof run.output === "string" ? run.output : JSON.stringify(run.output, null, 2))];
  return el("section", { class: "panel program", id: "program-" + entry.number, "data-source": entry.source },
    el("h3", {}, "Program " + entry.number + " · " + (entry.source === "tool_chain" ? "tool chain" : "attempt " + program.attempt) + " · ", el("span", { class: "status " + program.status }, program.status), " · " + plural(program.tool_calls || 0, "bridged call") + " · " + duration(program.duration_ms)),
    el("div", { class: "role" }, "code"), el("pre", { class: "program-code" }, program.code || ""),
    el("div", { class: "tally" }, plural(calls.length, "bridged call") + (calls.length ? ": " + Object.entries(tally).map(([tool, n]) => tool + " ×" + n).join(", ") : "")),
    calls.length ? el("div", { class: "calls" }, el("table", {},
      el("colgroup", {}, el("col", { class: "index" }), el("col", { class: "tool" }), el("col", { class: "state" }), el("col", { class: "ms" }), el("col", {})),
      el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "tool"), el("th", {}, "status"), el("th", { class: "number" }, "time"), el("th", { title: "what was sent, as a digest: the arguments are not stored" }, "arguments"))),
      el("tbody", {}, ...calls.map((call, index) => el("tr", { class: "bridged-call" },
        el("td", {}, String(index + 1)), el("td", { title: call.tool }, call.tool), el("td", { class: "status " + call.status }, call.status), el("td", { class: "number" }, duration(call.duration_ms)),
        call.error ? el("td", { class: "error" }, call.error) : el("td", { class: "digest", title: "SHA-256 of the arguments (first 16 hex digits)" }, call.arguments_digest || "")))))) : null,
    ...(output || []));
}

function artifactsView(run) {
  const artifacts = run.details && Array.isArray(run.details.artifacts) ? run.details.artifacts : [];
  if (!artifacts.length) return [];
  return [el("div", { class: "section" }, plural(artifacts.length, "artifact")), el("pre", {}, artifacts.map((artifact) => (artifact.ref || "?") + " · " + (artifact.mime || "?") + " · " + (artifact.size ?? "?") + " bytes" + (artifact.path ? " · " + artifact.path : "")).join("\\n"))];
}

// The page follows its address: the list when its query changed, the run when its path did.
async function loadFacets() {
  try {
    const response = await fetch("/api/facets");
    if (!response.ok) return;
    const facets = await response.json();
    $("tactic").replaceChildren(el("option", { value: "" }, "any tactic"), ...facets.tactics.map((tactic) => el("option", { value: tactic.name }, tactic.name + " (" + count(tactic.runs) + ")")));
    $("batch").replaceChildren(el("option", { value: "" }, "any batch"), el("option", { value: "none" }, "not in a batch"), ...facets.batches.map((batch) => el("option", { value: batch.id }, shortTime(batch.started_at) + " · " + (batch.tactic_name || "?") + " · " + count(batch.runs) + " runs")));
  } catch {
    // The filters still work by address; the choices are a convenience.
  }
}

function showControls() {
  const params = new URLSearchParams(location.search);
  $("q").value = params.get("q") || "";
  for (const id of ["tactic", "status", "batch", "test"]) {
    const value = params.get(id) || "";
    const select = $(id);
    // A value from a link that the choices do not list yet (an older batch, say) is added, so it shows.
    if (value && ![...select.options].some((option) => option.value === value)) select.append(el("option", { value }, value));
    select.value = value;
  }
  $("from").value = params.get("from") || "";
  $("to").value = params.get("to") || "";
}

function render() {
  showControls();
  const run = runOfPath();
  if (listParams().toString() !== listShown) loadList();
  else for (const row of document.querySelectorAll("tr.run")) row.classList.toggle("selected", row.dataset.id === run);
  if (run !== runShown) {
    if (run) loadRun(run);
    else {
      runShown = null;
      document.title = "lllm runs";
      $("detail").replaceChildren(el("p", { class: "empty" }, "Select a run."));
    }
  }
}

function applyFilters() {
  const params = new URLSearchParams();
  const q = $("q").value.trim();
  if (q) params.set("q", q);
  for (const id of ["tactic", "status", "batch", "test", "from", "to"]) if ($(id).value) params.set(id, $(id).value);
  go(runOfPath(), params);
}

// The token came in the address once; the cookie carries it from now on, so it leaves the address bar.
const first = new URL(location.href);
if (first.searchParams.has("token")) {
  first.searchParams.delete("token");
  history.replaceState(null, "", first.pathname + first.search + first.hash);
}
for (const id of ["tactic", "status", "batch", "test", "from", "to"]) $(id).addEventListener("change", applyFilters);
let typing;
$("q").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(applyFilters, 400); });
$("q").addEventListener("keydown", (event) => { if (event.key === "Enter") { clearTimeout(typing); applyFilters(); } });
$("clear").addEventListener("click", () => go(runOfPath(), new URLSearchParams()));
$("refresh").addEventListener("click", () => { listShown = null; runShown = null; loadFacets(); render(); });
$("newest").addEventListener("click", () => go(runOfPath(), withCursor(null)));
$("oldest").addEventListener("click", () => go(runOfPath(), withCursor("after", "")));
window.addEventListener("popstate", render);
loadFacets().then(showControls);
render();
`;
