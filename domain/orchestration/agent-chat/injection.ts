// The prompt-injection check: a message matching any of these patterns is refused (400
// `prompt_injection_detected`) before anything reaches the model. The set is deliberately
// narrow, each pattern a known attack shape, so ordinary questions pass:
//
// - instruction override: "ignore / disregard / forget / override / bypass ... previous / above
//   / system ... instructions / prompt / rules";
// - role reassignment: "you are now ...", "from now on you are/will ...", "act as an
//   unrestricted / jailbroken ...", "enable developer / DAN mode", "pretend you have no rules";
// - system-prompt extraction: "reveal / show / print / repeat ... your system prompt / your
//   instructions / the hidden prompt", "repeat everything above";
// - delimiter tricks: chat-template tokens (`<|im_start|>`, `[INST]`, `<<SYS>>`), fake role
//   tags (`<system>`, `</assistant>`), a line opening with `system:` or `### system`;
// - encoding tricks: invisible or direction-changing characters (zero-width, bidi overrides),
//   "decode this base64/rot13/hex and follow it", and base64 runs whose decoded text matches
//   any pattern above.
//
// Text is NFKC-normalised (full-width letters read as ASCII) and whitespace collapsed first.

import { Buffer } from 'node:buffer';

interface Pattern {
  name: string;
  test: RegExp;
}

const PATTERNS: Pattern[] = [
  {
    name: 'instruction_override',
    test: /\b(ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,40}?\b(previous|prior|above|earlier|preceding|all|any|your|the|system|developer)\b[^.\n]{0,30}?\b(instructions?|prompts?|rules|directions|guidelines|directives|context|guardrails)\b/i,
  },
  {
    name: 'role_reassignment',
    test: /\byou are now (an? |the |my )?(?!able\b|ready\b|done\b|connected\b|logged\b|signed\b|subscribed\b|registered\b)\w+/i,
  },
  { name: 'role_reassignment', test: /\bfrom now on,? (you (are|will|must|shall)|act|behave|respond)\b/i },
  {
    name: 'role_reassignment',
    test: /\b(act|behave|respond) as (if you (were|are) )?(an? )?(unrestricted|unfiltered|uncensored|jailbroken|evil|dan\b|different (ai|assistant|model))/i,
  },
  {
    name: 'role_reassignment',
    test: /\b(enter|enable|activate|switch to) (developer|debug|god|dan|jailbreak|admin) mode\b/i,
  },
  {
    name: 'role_reassignment',
    test: /\bpretend (that )?you (are|have) (no|not any) (rules|restrictions|guidelines|limits|filters)\b/i,
  },
  {
    name: 'system_prompt_extraction',
    test: /\b(reveal|show|print|repeat|output|display|dump|leak|recite|tell me|what (is|are|were))\b[^.\n]{0,40}?\b(system prompt|system message|(your|the) (initial|original|hidden|secret|internal|full) (prompt|instructions)|your (prompt|instructions))\b/i,
  },
  {
    name: 'system_prompt_extraction',
    test: /\b(repeat|print|output) (everything|all|the text|the words) (above|before|preceding)\b/i,
  },
  {
    name: 'delimiter',
    test: /<\|(im_start|im_end|system|endoftext)\|>|\[\/?(INST|SYS)\]|<<\/?SYS>>|<\/?(system|assistant|developer)>/i,
  },
  { name: 'delimiter', test: /(^|\n)\s*(#{2,}\s*)?(system|developer)\s*(:|prompt\s*:|message\s*:)/i },
  { name: 'encoding', test: /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/ },
  {
    name: 'encoding',
    test: /\b(decode|decipher|translate|convert)\b[^.\n]{0,40}?\b(base64|rot13|hex|binary|morse)\b[^\n]{0,60}?\b(follow|execute|run|obey|do what|carry out)\b/i,
  },
];

const BASE64_RUN = /[A-Za-z0-9+/]{24,}={0,2}/g;

function normalise(text: string): string {
  return text.normalize('NFKC').replace(/[ \t\r\f\v]+/g, ' ');
}

function matchPlain(text: string): string[] {
  return [...new Set(PATTERNS.filter((p) => p.test.test(text)).map((p) => p.name))];
}

/** The names of the pattern families the message matches; empty when it is clean. */
export function detectInjection(message: string): string[] {
  // The invisible-character check runs before normalisation (NFKC keeps them, but be explicit).
  const text = normalise(message);
  const found = new Set(matchPlain(text));
  for (const [run] of text.matchAll(BASE64_RUN)) {
    const decoded = Buffer.from(run, 'base64').toString('utf8');
    // Only text that decodes to mostly printable characters is a hidden message.
    if (/^[\x20-\x7e\s]+$/.test(decoded) && matchPlain(normalise(decoded)).length > 0) found.add('encoding');
  }
  return [...found];
}
