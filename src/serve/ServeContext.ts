import type { ApprovalPolicy } from "../approval/index.js";
import type { RunLimits } from "../limits/index.js";
import type { Admission } from "./Admission.js";
import type { PausedRuns } from "./PausedRuns.js";
import type { ServedModels } from "./ServedModels.js";
import type { QueueGauges } from "./queue/QueueBridge.js";
import type { RunHandle } from "./RunHandle.js";
import type { ServedRunOptions } from "./ServedRun.js";
import type { ServeMetrics } from "./ServeMetrics.js";
import type { ServedResponses } from "./responses/ServedResponses.js";
import type { HeldStore } from "../store/HeldStore.js";

/** The queue the runs go to (`lllm serve --queue`): runs on its workers, and what /metrics shows of it. */
export interface ServeQueue {
  createRun(options: ServedRunOptions): RunHandle;
  /** The paused run (started through any server of the pool) waiting for these calls' results, taken over here. */
  adopt(callIds: string[]): Promise<RunHandle | undefined>;
  gauges(): Promise<QueueGauges>;
}

/** What every route shares: the models, the places to run, the paused runs, the metrics and the settings. */
export interface ServeContext {
  models: ServedModels;
  admission: Admission;
  paused: PausedRuns;
  metrics: ServeMetrics;
  /** Responses kept for `previous_response_id` and `GET /v1/responses/{id}`. */
  responses: ServedResponses;
  /** The runs going on (paused ones included), so that stopping can wait for them and then cancel them. */
  runs: Set<RunHandle>;
  /** The server's ceilings over every request's limits. */
  limits: RunLimits;
  approve: ApprovalPolicy;
  /** Whether clients must send the bearer token (the agent card names the scheme). */
  auth: boolean;
  /** The base URL clients reach the server at, when not the address of the request (`--public-url`: behind a proxy). */
  publicUrl?: string;
  /** `false`: record no run (`--no-log`). */
  log: boolean;
  /** The run store, read back for responses and A2A tasks no longer in memory; absent with `--no-log`. */
  store?: HeldStore;
  /** The environment's credentials, read when the server started: every run's record is redacted of them. */
  environmentSecrets: readonly string[];
  warn: (message: string) => void;
  /** Where runs run when not in this process (`--queue`). */
  queue?: ServeQueue;
  /** Whether the server is stopping: new runs are refused (503). */
  readonly draining: boolean;
}
