// The kinds of environment variable the platform reads, as zod schemas over the raw text.
// A section declares each variable once with one of these builders; the builder records the
// variable's description, its default (as the reference shows it) and whether it is a secret in
// `envVarMeta`, the registry the reference generator and `orchard config` read.
//
// Every kind trims the text and treats blank as unset (delimiters excepted: a space may be one).
// A bad value becomes one zod issue whose message reads `expected ..., got "..."`; loadConfig
// prefixes it with the variable's name (the issue's path).

import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';

export interface EnvVarMeta {
  description: string;
  /** The default as the reference shows it: a literal, or how it is derived (`DATA_DIR/agents`). */
  default?: string;
  /** Holds a secret, or names the file holding one: shown redacted, never in plaintext. */
  secret?: boolean;
}

export const envVarMeta = z.registry<EnvVarMeta>();

/** A section's variables: name -> its schema. */
export type EnvVars = Record<string, z.ZodType<unknown, string | undefined>>;

/** What a section's variables parse to: name -> value. */
export type Values<V extends EnvVars> = { [K in keyof V]: z.output<V[K]> };

type Doc = { description: string; secret?: boolean };

class Invalid {
  constructor(readonly message: string) {}
}
const got = (text: string) => `got ${JSON.stringify(text)}`;

/**
 * The one way a kind is built: unset or blank gives `fallback()`, else `parse` decides. The
 * fallback is made per load, so no two configs share an array or an address object.
 */
function variable<T, F>(meta: EnvVarMeta, fallback: () => F, parse: (text: string) => T | Invalid, trim = true) {
  const schema = z
    .string()
    .optional()
    .transform((raw, ctx): T | F => {
      const text = trim ? (raw ?? '').trim() : (raw ?? '');
      if (!text) return fallback();
      const value = parse(text);
      if (value instanceof Invalid) {
        ctx.addIssue({ code: 'custom', message: value.message });
        return z.NEVER;
      }
      return value;
    });
  return schema.register(envVarMeta, meta);
}

/** Free text; unset: `fallback` (null when the variable has no default). */
export function text(doc: Doc): z.ZodType<string | null, string | undefined>;
export function text(doc: Doc & { default: string }): z.ZodType<string, string | undefined>;
export function text(doc: Doc & { default?: string }): z.ZodType<string | null, string | undefined> {
  return variable(
    doc,
    () => doc.default ?? null,
    (t) => t,
  );
}

/** Free text whose default is worked out from other variables when the config is composed. */
export function derived(doc: Doc & { default: string }): z.ZodType<string | null, string | undefined> {
  return variable(
    doc,
    () => null,
    (t) => t,
  );
}

/** A base URL: trailing slashes dropped; unset (or only slashes): null, and `default` (if given) only says what is used instead. */
export function baseUrl(doc: Doc & { default?: string }): z.ZodType<string | null, string | undefined> {
  return variable(
    doc,
    () => null,
    (t) => t.replace(/\/+$/, '') || null,
  );
}

/** An http(s) URL kept as given. */
export function httpUrl(doc: Doc): z.ZodType<string | null, string | undefined> {
  return variable(
    doc,
    () => null,
    (t) => (/^https?:\/\/\S+$/i.test(t) ? t : new Invalid(`expected an http(s) URL, ${got(t)}`)),
  );
}

/** A separator: not trimmed, so a space can be one. */
export function delimiter(doc: Doc & { default: string }): z.ZodType<string, string | undefined> {
  return variable(
    doc,
    () => doc.default,
    (t) => t,
    false,
  );
}

/** Comma-separated values, each trimmed, blanks dropped; unset: none. */
export function list(doc: Doc): z.ZodType<string[], string | undefined> {
  return variable(
    doc,
    (): string[] => [],
    (t) =>
      t
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
  );
}

export function positiveInt(doc: Doc & { default: number }): z.ZodType<number, string | undefined> {
  return variable(
    { ...doc, default: String(doc.default) },
    () => doc.default,
    (t) => {
      const n = Number(t);
      return Number.isInteger(n) && n >= 1 ? n : new Invalid(`expected a positive integer, ${got(t)}`);
    },
  );
}

export function wholeNumber(doc: Doc & { default: number }): z.ZodType<number, string | undefined> {
  return variable(
    { ...doc, default: String(doc.default) },
    () => doc.default,
    (t) => {
      const n = Number(t);
      return Number.isInteger(n) && n >= 0 ? n : new Invalid(`expected a whole number (0 or more), ${got(t)}`);
    },
  );
}

/** One of `values`, any case; unset: `default` (null when there is none). */
export function oneOf<const V extends string>(
  values: readonly V[],
  doc: Doc & { default: V },
): z.ZodType<V, string | undefined>;
export function oneOf<const V extends string>(values: readonly V[], doc: Doc): z.ZodType<V | null, string | undefined>;
export function oneOf<const V extends string>(
  values: readonly V[],
  doc: Doc & { default?: V },
): z.ZodType<V | null, string | undefined> {
  const expected = values.length === 2 ? values.join(' or ') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
  return variable(
    doc,
    () => doc.default ?? null,
    (t) => {
      const value = t.toLowerCase() as V;
      return values.includes(value) ? value : new Invalid(`expected ${expected}, ${got(t)}`);
    },
  );
}

const FALSY = new Set(['0', 'false', 'no', 'off']);
const TRUTHY = new Set(['1', 'true', 'yes', 'on']);

/** An opt-out flag: only an explicit falsy value (0, false, no, off; any case) turns it off. */
export function optOut(value: string | undefined): boolean {
  return !FALSY.has((value ?? '').trim().toLowerCase());
}

/** An opt-in flag: only an explicit truthy value (1, true, yes, on; any case) turns it on. */
export function optIn(value: string | undefined): boolean {
  return TRUTHY.has((value ?? '').trim().toLowerCase());
}

// Flags never refuse a value: anything but the explicit spelling leaves the default.
export function onUnlessOff(doc: Doc): z.ZodType<boolean, string | undefined> {
  return variable({ ...doc, default: 'on' }, () => true, optOut);
}

export function offUnlessOn(doc: Doc): z.ZodType<boolean, string | undefined> {
  return variable({ ...doc, default: 'off' }, () => false, optIn);
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** `host:port`, `[v6]:port` or `:port` (127.0.0.1); blank: `fallback`. */
export function parseListen(value: string | undefined, fallback: string): ListenAddress {
  const text = (value ?? '').trim() || fallback;
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(text);
  if (!match) throw new Error(`expected a listen address (host:port), ${got(text)}`);
  return { host: match[1] || '127.0.0.1', port: Number(match[2]) };
}

export function listen(doc: Doc & { default: string }): z.ZodType<ListenAddress, string | undefined> {
  return variable(
    doc,
    () => parseListen(doc.default, ''),
    (t) => {
      try {
        return parseListen(t, '');
      } catch (error) {
        return new Invalid((error as Error).message);
      }
    },
  );
}

/** A PEM file of certificates, read when the config loads (an unreadable one stops the start). */
export function pemFile(doc: Doc): z.ZodType<{ path: string; pem: string } | null, string | undefined> {
  return variable(
    doc,
    () => null,
    (file) => {
      let pem: string;
      try {
        pem = readFileSync(file, 'utf8');
      } catch (error) {
        return new Invalid(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${file}`);
      }
      return pem.includes('-----BEGIN CERTIFICATE-----')
        ? { path: file, pem }
        : new Invalid(`holds no PEM certificate: ${file}`);
    },
  );
}

/** A kind of its own (say, the update check interval): `parse` throws `expected ...` on a bad value. */
export function custom<T>(
  doc: Doc & { default: string },
  parse: (text: string | undefined) => T,
): z.ZodType<T, string | undefined> {
  return variable(
    doc,
    () => parse(undefined),
    (t) => {
      try {
        return parse(t);
      } catch (error) {
        return new Invalid((error as Error).message);
      }
    },
  );
}

/** Bad configuration: one line per problem, each `NAME: what is wrong`. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

export const problem = (name: string, message: string) => new ConfigError([`${name}: ${message}`]);

/**
 * A secret given directly or through `<NAME>_FILE`: the direct value wins and the file is then
 * not read. Read when the config is composed (not per variable), since it takes two variables.
 */
export function secretValue(
  direct: string | null,
  file: string | null,
  fileVar: string,
): { value: string | null; literal: boolean } {
  if (direct) return { value: direct, literal: true };
  if (!file) return { value: null, literal: false };
  if (!existsSync(file)) throw problem(fileVar, `names a file that does not exist: ${file}`);
  return { value: readFileSync(file, 'utf8').trim() || null, literal: false };
}
