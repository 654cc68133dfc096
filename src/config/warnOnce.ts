/** Warnings given in this process: a settings file or home is judged by every command that reads it, told once. */
const given = new Set<string>();

/**
 * Tell the user `message` on stderr, once per process: what lllm ignores for the user's safety (another user's
 * settings file, a home others may write to) is said where it happens, however many times it is looked at.
 */
export function warnOnce(message: string): void {
  if (given.has(message)) return;
  given.add(message);
  process.stderr.write(`lllm: warning: ${message}\n`);
}
