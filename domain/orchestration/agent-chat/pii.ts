// PII scrubbing (profile flag `pii_scrub`): personal data in a chat message is replaced by a
// placeholder before the model sees it, and in a reply before it is returned and stored.
//
// | what | placeholder | rule |
// |---|---|---|
// | e-mail address | `[EMAIL]` | local@domain.tld |
// | IBAN | `[IBAN]` | country code, 2 check digits, 11-30 letters/digits (spaces allowed between groups), passing the ISO 7064 mod-97 check |
// | payment card | `[CARD]` | 13-19 digits (single spaces or dashes between them allowed) passing the Luhn check |
// | US SSN | `[SSN]` | AAA-GG-SSSS, not area 000, 666 or 9xx, group 00 or serial 0000 |
// | IP address | `[IP]` | dotted-quad IPv4; IPv6 (full, compressed or IPv4-suffixed) as node's `isIP` reads it |
// | phone number | `[PHONE]` | 7-15 digits with an optional leading `+` country code, separators space, dot, dash or parentheses; at least 9 digits unless it starts with `+` or `(` (so dates and short numbers stay) |
//
// The order matters: the more specific patterns run first, so a card number is `[CARD]`, not
// `[PHONE]`. Digit runs that fail their check (a Luhn-failing 16-digit number) fall through to
// the later patterns.

import { isIP } from 'node:net';

const EMAIL =
  /[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}/g;
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g;
const CARD = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g;
const SSN = /(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])/g;
const IPV4 = /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\d.]|\.\d)/g;
const IPV6_CANDIDATE =
  /(?<![0-9A-Fa-f:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?::(?:\d{1,3}\.){3}\d{1,3})?(?![0-9A-Fa-f:])/g;
// Not inside an identifier: a run of digit groups joined to letters or digits by a hyphen (a
// UUID's `7666-4178-8166`) is part of that identifier, not a phone number.
const PHONE = /(?<![\w+]|\w-)(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,5}){1,4}(?!\w|-\w)/g;

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

export function ibanValid(text: string): boolean {
  const iban = text.replace(/ /g, '');
  if (iban.length < 15 || iban.length > 34) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const value = ch >= 'A' && ch <= 'Z' ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

function phoneLike(match: string): boolean {
  const digits = match.replace(/\D/g, '').length;
  if (digits < 7 || digits > 15) return false;
  return digits >= 9 || /^[+(]/.test(match);
}

export function scrubPii(text: string): string {
  return text
    .replace(EMAIL, '[EMAIL]')
    .replace(IBAN, (m) => (ibanValid(m) ? '[IBAN]' : m))
    .replace(CARD, (m) => (luhnValid(m.replace(/\D/g, '')) ? '[CARD]' : m))
    .replace(SSN, '[SSN]')
    .replace(IPV4, '[IP]')
    .replace(IPV6_CANDIDATE, (m) => (isIP(m) === 6 ? '[IP]' : m))
    .replace(PHONE, (m) => (phoneLike(m) ? '[PHONE]' : m));
}

/** At most `chars` characters (code points) of the text, PII scrubbed: what audit details may hold. */
export function auditExcerpt(text: string, chars: number): string {
  return Array.from(scrubPii(text)).slice(0, chars).join('');
}
