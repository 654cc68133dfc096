/**
 * One line of `lllm doctor`: what was checked, how it stands, and how to fix it. `fail` means something the
 * command line asked about (a tactic, a queue) cannot work, or nothing can (Node too old, an unusable keys file):
 * `lllm doctor` then exits 1. `warn` is a missing piece that only some uses need.
 */
export interface DoctorCheck {
  /** A short, stable name: `node`, `python3`, `bubblewrap`, `keys file`, `key OPENAI_API_KEY`… */
  name: string;
  status: "ok" | "warn" | "fail";
  /** What was found. */
  detail: string;
  /** How to fix it (absent when nothing needs fixing). */
  fix?: string;
}

/** A check that failed only because the tactic needs it: `fail` when `needed`, else `warn`. */
export function missing(needed: boolean): "warn" | "fail" {
  return needed ? "fail" : "warn";
}
