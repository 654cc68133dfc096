/**
 * Runs code cells and returns what they print (seed 000, Step 17). A tactic needs nothing else, so a subprocess,
 * a persistent kernel, a container or a remote service can stand behind it unchanged.
 */
export interface Sandbox {
  /** Run one cell; resolve with its printed output (and, when it failed, the error text). */
  run(code: string): Promise<string>;
  /** Forget every variable; what the sandbox itself defines (such as CALL_API) stays. */
  reset?(): Promise<void>;
  /** Stop the sandbox and free what it holds; calling it twice is fine. */
  close?(): Promise<void>;
}
