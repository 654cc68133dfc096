import type { RunUsage } from "../tactics/TacticRun.js";

/** One input of a batch, as read from the dataset. */
export interface BatchItem {
  /** The item's `id`, else its line number (CSV: the row's line number), as text. */
  id: string;
  /** Position in the dataset, from 0: `--ordered` writes results in this order. */
  index: number;
  /** The input: text, or a value for a tactic whose `input` schema is an object. */
  input: unknown;
  vars: Record<string, string>;
  /** Set when the line could not be read as an item: it is reported as failed, never run. */
  problem?: { code: string; message: string };
}

/** One line of the output (NDJSON), written when the item finishes. */
export interface BatchResult {
  id: string;
  status: "ok" | "error";
  output: unknown;
  error: { code: string; message: string } | null;
  usage: RunUsage;
  cost: number | null;
  run_id: string | null;
  duration_ms: number;
}
