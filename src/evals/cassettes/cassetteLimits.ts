/**
 * What a cassette may be. Far above what a real case records (a dialog cannot outgrow its model's context window,
 * some hundreds of KB), they keep a hostile or broken cassette from taking the test run down: a replay matches each
 * turn against every message recorded before it in its dialog, so time and memory grow with the square of the
 * turns (a 40 MB cassette took 2.6 GB before failing, 85 MB aborted node).
 */
export const CASSETTE_LIMITS = {
  /** Bytes of one cassette file. */
  maxBytes: 4 * 1024 * 1024,
  /** Model turns in one cassette, all its agents together. */
  maxTurns: 2000,
} as const;

/** `4 MB`, `4.1 MB`, `120 KB`: rounded up, so that a size past a limit never reads as the limit. */
export function formatSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(Math.ceil((bytes / (1024 * 1024)) * 10) / 10).toString()} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
