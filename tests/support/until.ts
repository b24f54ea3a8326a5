// Polling for what settles a moment later (a subscription, a background process, a browser frame).

/** Poll `fn` every `everyMs` until it answers a truthy value (errors count as "not yet"), or fail after `ms`. */
export async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 180_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
