// What a failed call says, turned into what a form shows: the error body of any failed call (a
// network failure reads as one too), and a refused write's message mapped onto the form's fields.
// A 400 `validation_failed` (or `invalid_reference`) names its fields ("security_tier: Too big;
// name must ..."), each part lands on the field it names; a 409 `slug_taken` lands on the slug;
// anything else is the form's own error.

import type { ApiErrorBody } from '../api/client.ts';

export type FieldErrors = Record<string, string>;

/** The error body of a failed call (openapi-fetch types it per route; no answer reads as `network`). */
export function problem(error: unknown): ApiErrorBody {
  const body = error as Partial<ApiErrorBody> | undefined;
  return {
    ...body,
    error: body?.error ?? 'network',
    message: body?.message ?? 'The server did not answer; try again.',
  };
}

/** A refused write's body onto the form: `fields` for the named fields of `known`, `form` for the rest. */
export function serverErrors(
  body: Partial<ApiErrorBody> | undefined,
  known: readonly string[],
): { fields: FieldErrors; form: string | null } {
  const message = body?.message ?? 'The server did not answer; try again.';
  const fields: FieldErrors = {};
  if (body?.error === 'slug_taken' && known.includes('slug')) return { fields: { slug: message }, form: null };
  if (body?.error !== 'validation_failed' && body?.error !== 'invalid_reference') return { fields, form: message };
  const rest: string[] = [];
  for (const part of message.split('; ')) {
    const match = /^([a-z_]+)(?::| must)\s*(.*)$/.exec(part);
    const name = match?.[1];
    if (name && known.includes(name)) fields[name] = part.startsWith(`${name}:`) ? match[2]! : part;
    else rest.push(part);
  }
  return { fields, form: rest.length ? rest.join('; ') : null };
}

/** Characters as the server counts them: code points, not UTF-16 units. */
export const codePoints = (text: string) => [...text].length;
