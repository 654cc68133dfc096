import type { Message } from "../agent/index.js";
import { loadProjectSettings } from "../config/index.js";
import { ConfigError } from "../errors.js";
import { dialogOfRun } from "../store/dialogOfRun.js";
import { AmbiguousRunIdError, RunStore } from "../store/RunStore.js";
import { NO_RUNS_YET, storeFile } from "../store/startRunLog.js";
import { existsSync } from "node:fs";
import { warn } from "./output.js";
import { ASSISTANT_TACTIC } from "./assistantTactic.js";

/** What `lllm run --continue [ID]` continues: the run, its tactic, and the dialog it ended with. */
export interface ContinuedRun {
  id: string;
  /** The tactic to run: the one given, else the earlier run's. */
  target: string;
  history: Message[];
  /**
   * The model the earlier run asked, when its tactic names none of its own (`lllm chat`'s plain assistant): a
   * continuation without `--model` asks it again (it stopped at the assistant's file, an lllm file, asking for one).
   */
  model?: string;
}

/**
 * Find the run to continue. `--continue` takes an optional id, so `lllm run --continue tactic.yaml` hands the
 * tactic to the flag: a value that is not an id (ids are letters and digits; `last`) is taken as the tactic.
 */
export async function findContinuedRun(target: string | undefined, flag: string | true): Promise<ContinuedRun> {
  let id = flag === true ? "last" : flag;
  if (target === undefined && flag !== true && (!/^[0-9a-z]+$/i.test(flag) || existsSync(flag))) {
    target = flag;
    id = "last";
  }
  const { settings } = await loadProjectSettings(process.cwd());
  const file = storeFile(process.env, settings.home);
  if (!RunStore.exists(file)) throw new ConfigError("store_run_not_found", `--continue: no runs logged yet (${file})`, { location: { file: "--continue" }, hint: NO_RUNS_YET });
  const store = await RunStore.open(file, { warn });
  let run: ReturnType<RunStore["getRun"]>;
  try {
    run = store.getRun(id);
  } catch (error) {
    if (error instanceof AmbiguousRunIdError) throw new ConfigError("store_run_ambiguous", error.message, { location: { file: "--continue" }, hint: "Give more characters of the id (see `lllm logs`)." });
    throw error;
  } finally {
    store.close();
  }
  if (!run) throw new ConfigError("store_run_not_found", `--continue: no run \`${id}\` in the log`, { location: { file: "--continue" }, hint: "See the ids with `lllm logs`." });
  const dialog = dialogOfRun(run);
  if (!dialog) throw new ConfigError("store_run_not_continuable", `--continue: run ${run.id} (${run.status}) ended without an answer, so there is no dialog to continue`, { location: { file: "--continue" }, hint: "Continue a run that answered (see `lllm logs --status ok`)." });
  const tactic = target ?? run.tactic_path;
  if (tactic === null) throw new ConfigError("usage_missing_tactic", `--continue: run ${run.id} has no tactic on record; name it: lllm run TACTIC --continue ${run.id}`);
  const model = target === undefined && run.tactic_path === ASSISTANT_TACTIC ? run.models[0] : undefined;
  return { id: run.id, target: tactic, history: dialog.messages, ...(model !== undefined ? { model } : {}) };
}
