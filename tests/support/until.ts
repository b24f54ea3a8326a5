// Polling for what settles a moment later (a subscription, a background process, a browser frame):
// the one bounded wait of the suites.

/** Thrown by a check to end the wait at once (say, the child process it waits on has exited). */
export class GiveUp extends Error {}

/**
 * Poll `fn` every `everyMs` until it answers a truthy value, which it returns, or fail after `ms`
 * with "timed out after <ms> ms waiting for <what>". An error thrown by `fn` counts as "not yet"
 * (the last attempt's error is named in the failure), except `GiveUp`, which fails at once. `what` may be a
 * function, called only on failure, for what is known only then (the last count seen, a log tail).
 */
export async function until<T>(
  what: string | (() => string),
  fn: () => Promise<T | null | undefined | false>,
  ms = 180_000,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + ms;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
      lastError = undefined;
    } catch (error) {
      if (error instanceof GiveUp) throw error;
      lastError = error;
    }
    if (Date.now() > deadline) {
      const awaited = typeof what === 'function' ? what() : what;
      const last =
        lastError === undefined
          ? ''
          : `\nlast error: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new Error(`timed out after ${ms} ms waiting for ${awaited}${last}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
