// Leak detection: a reply that reproduces the system prompt, or the profile's canary planted in
// it, is not returned or stored; a fixed refusal replaces it.
//
// "Reproduces" means any LEAK_WINDOW (40) or more consecutive characters of the base system
// prompt appear in the reply, compared after both are lower-cased and their whitespace runs
// collapsed to one space. The check hashes every 40-character window of the prompt once (a
// rolling hash), then slides over the reply: linear in both lengths, whatever the prompt's size;
// a hash hit is confirmed by comparing the text, so a collision never refuses a reply.

export const LEAK_WINDOW = 40;
export const LEAK_REFUSAL = "I can't share that. Is there something else I can help you with?";

export function normaliseForLeak(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

const BASE = 257;

function power(n: number): number {
  let p = 1;
  for (let i = 0; i < n; i++) p = Math.imul(p, BASE) >>> 0;
  return p;
}
const HIGH = power(LEAK_WINDOW - 1);

/** Hashes of each LEAK_WINDOW-character window of `text` (UTF-16 units), in order. */
function* windows(text: string): Generator<[number, number]> {
  if (text.length < LEAK_WINDOW) return;
  let h = 0;
  for (let i = 0; i < LEAK_WINDOW; i++) h = (Math.imul(h, BASE) + text.charCodeAt(i)) >>> 0;
  yield [h, 0];
  for (let i = LEAK_WINDOW; i < text.length; i++) {
    h = (h - Math.imul(text.charCodeAt(i - LEAK_WINDOW), HIGH)) >>> 0;
    h = (Math.imul(h, BASE) + text.charCodeAt(i)) >>> 0;
    yield [h, i - LEAK_WINDOW + 1];
  }
}

/** A system prompt prepared for checking replies against (build once per prompt, reuse). */
export class PromptFingerprint {
  private readonly text: string;
  private readonly hashes = new Set<number>();

  constructor(systemPrompt: string) {
    this.text = normaliseForLeak(systemPrompt);
    for (const [hash] of windows(this.text)) this.hashes.add(hash);
  }

  reproducedIn(reply: string): boolean {
    if (this.hashes.size === 0) return false;
    const text = normaliseForLeak(reply);
    for (const [hash, at] of windows(text)) {
      if (this.hashes.has(hash) && this.text.includes(text.slice(at, at + LEAK_WINDOW))) return true;
    }
    return false;
  }
}

export type LeakVerdict = 'system_prompt' | 'canary' | null;

export function detectLeak(reply: string, fingerprint: PromptFingerprint, canary: string): LeakVerdict {
  if (canary && reply.toLowerCase().includes(canary.toLowerCase())) return 'canary';
  return fingerprint.reproducedIn(reply) ? 'system_prompt' : null;
}
