/**
 * Poll `condition` (which may be async: a request to a server) until it holds or `ms` pass; returns whether it held.
 * The default is generous: a busy 2-core machine can take seconds to start or reap a process, and a test that passes
 * waits no longer than it must.
 */
export async function waitUntil(condition: () => boolean | Promise<boolean>, ms = 15_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return condition();
}
