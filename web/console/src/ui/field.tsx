// A labelled form field whose error is tied to it by aria-describedby (and aria-invalid), and the
// mapping of a server 400 (`validation_failed`, "field: problem; other: problem") onto fields.

import type { ComponentChildren } from 'preact';
import './ui.css';

export type FieldErrors = Record<string, string>;

export function Field(props: { id: string; label: string; error?: string; hint?: string; children: (aria: Record<string, string | boolean | undefined>) => ComponentChildren }) {
  const errorId = `${props.id}-error`;
  const hintId = `${props.id}-hint`;
  const describedBy = [props.hint ? hintId : '', props.error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.hint && <span id={hintId} class="hint">{props.hint}</span>}
      {props.children({ id: props.id, 'aria-describedby': describedBy, 'aria-invalid': props.error ? true : undefined })}
      {props.error && <span id={errorId} class="field-error">{props.error}</span>}
    </div>
  );
}

/**
 * A server error body onto the form's fields: each "field: problem" of a validation message that
 * names one of `fields` lands on it; the rest (and any other error) is the form's own message.
 */
export function serverErrors(body: { error?: string; message?: string } | undefined, fields: string[]): { fields: FieldErrors; form: string | null } {
  const message = body?.message ?? 'The server did not answer; try again.';
  const found: FieldErrors = {};
  const rest: string[] = [];
  if (body?.error === 'validation_failed' || body?.error === 'invalid_reference') {
    for (const part of message.split('; ')) {
      const match = /^([a-z_]+)(?::| must)\s*(.*)$/.exec(part);
      const name = match?.[1];
      if (name && fields.includes(name)) found[name] = part.includes(':') ? match[2]! : part;
      else rest.push(part);
    }
    return { fields: found, form: rest.length ? rest.join('; ') : null };
  }
  return { fields: found, form: message };
}
