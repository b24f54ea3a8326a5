// What a refused write says, turned into messages a form can show: a 400 `validation_failed`
// names its fields (`security_tier: Too big: ...; name: ...`), each lands on its field; a 409
// about a taken slug lands on the slug; anything else is the form's own error.

import type { ApiErrorBody } from '../api/client.ts';

export interface Refusal { fields: Record<string, string>; form: string | null }

export function refusal(status: number, body: ApiErrorBody | undefined, known: readonly string[]): Refusal {
  const fields: Record<string, string> = {};
  const rest: string[] = [];
  const message = body?.message ?? 'The server did not answer; try again.';
  if (status === 409 && body?.error === 'slug_taken' && known.includes('slug')) {
    fields.slug = message;
    return { fields, form: null };
  }
  if (status === 400) {
    for (const part of message.split('; ')) {
      const colon = part.indexOf(': ');
      const field = colon > 0 ? part.slice(0, colon) : '';
      if (known.includes(field)) fields[field] = part.slice(colon + 2);
      else rest.push(part);
    }
    return { fields, form: rest.length ? rest.join('; ') : null };
  }
  return { fields, form: status === 403 ? `Refused: ${message}` : message };
}

/** The body of a failed call as the console's error type (openapi-fetch types it per route). */
export const failed = (error: unknown): ApiErrorBody => (error as ApiErrorBody | undefined) ?? { error: 'network', message: 'no answer from the server' };

/** Characters as the server counts them: code points, not UTF-16 units. */
export const codePoints = (text: string) => [...text].length;
