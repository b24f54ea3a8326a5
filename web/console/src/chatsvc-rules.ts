// The chat-service connect form's fields as the server checks them (the connect route's body in
// api/orchestration/chatsvc/routes.ts and instanceUrlProblem in domain/orchestration/chatsvc/
// rules.ts), checked in the browser before anything is sent. tests/orchestration/console/
// chatsvc-rules.test.ts holds these to the server's, so the two cannot drift apart. The server
// stays the judge: its 400 lands on the same field.

export const PROVISION_TOKEN = /^cb_[0-9a-f]{64}$/;
export const BOT_USERNAME = /^[A-Za-z0-9_]{3,32}$/;
export const DISPLAY_NAME_MAX = 64;
export const EXPIRY_HOURS = { min: 1, max: 87_600, default: 720 } as const;
export const INSTANCE_URL_MAX = 2048;

/** The message for a chat service base URL, or null when the server would take it. */
export function checkInstanceUrl(raw: string): string | null {
  if (raw.trim() === '') return "Enter the chat service's base URL.";
  if (raw.length > INSTANCE_URL_MAX) return `At most ${INSTANCE_URL_MAX} characters.`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'This is not a URL (for example https://chat.example.org).';
  }
  if (url.protocol === 'https:') return null;
  if (url.protocol !== 'http:') return 'Use https (or http to a loopback address).';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  return loopback ? null : 'Plain http is accepted only to a loopback address; use https.';
}

export function checkProvisionToken(token: string): string | null {
  if (token === '') return 'Paste a provision token.';
  return PROVISION_TOKEN.test(token) ? null : 'A provision token is cb_ followed by 64 lowercase hex characters.';
}

export function checkBotUsername(name: string): string | null {
  return BOT_USERNAME.test(name) ? null : '3 to 32 letters, digits or underscores.';
}

export function checkDisplayName(name: string): string | null {
  if (name === '') return 'Enter a display name.';
  return name.length > DISPLAY_NAME_MAX ? `At most ${DISPLAY_NAME_MAX} characters.` : null;
}

/** Empty: the server's default (720 hours). */
export function checkExpiry(text: string): { value: number | undefined } | { error: string } {
  if (text.trim() === '') return { value: undefined };
  const n = Number(text);
  if (!Number.isInteger(n) || n < EXPIRY_HOURS.min || n > EXPIRY_HOURS.max)
    return { error: `A whole number of hours from ${EXPIRY_HOURS.min} to ${EXPIRY_HOURS.max.toLocaleString('en')}.` };
  return { value: n };
}

/** A bot username suggested from a profile slug (hyphens become underscores). */
export function suggestUsername(slug: string): string {
  const base = slug
    .replace(/-/g, '_')
    .replace(/[^A-Za-z0-9_]/g, '')
    .slice(0, 28);
  if (base.length < 3) return 'orchestration_bot';
  return /bot$/i.test(base) ? base : `${base}_bot`;
}

/**
 * The name for a reconnect: the revoked bot keeps its end-to-end keys on the chat service, so a
 * bot of the same name cannot be reused; the suggestion counts up (`office_bot` → `office_bot_2`).
 */
export function nextUsername(previous: string): string {
  const m = /^(.*)_(\d+)$/.exec(previous);
  const base = m ? m[1]! : previous;
  const n = m ? Number(m[2]) + 1 : 2;
  const suffix = `_${n}`;
  return `${base.slice(0, 32 - suffix.length)}${suffix}`;
}
