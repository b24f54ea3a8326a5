// Form fields, in two layers with one wiring. `FieldFrame` is the frame of any control: a visible
// <label>, an optional hint and error, both tied to the control by aria-describedby (the error also
// sets aria-invalid); it hands those attributes to its render prop, so a page can put any control
// in it. `Field` is the standard controls (text, number, multi-line, select, checkbox) in that
// frame. `FormError` is a form's own error and `focusFirstError` takes focus there after a refusal.

import type { ComponentChildren } from 'preact';
import './ui.css';

export interface ControlAria {
  id: string;
  'aria-describedby': string | undefined;
  'aria-invalid': true | undefined;
}

interface Common {
  id: string;
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  /** Said in the label ("(required)"); the control itself gets `required` from its caller. */
  required?: boolean;
}

/** The label, hint and error of one control, and the attributes that tie them to it. */
export function FieldFrame(props: Common & { check?: boolean; children: (aria: ControlAria) => ComponentChildren }) {
  const hintId = props.hint ? `${props.id}-hint` : undefined;
  const errorId = props.error ? `${props.id}-error` : undefined;
  const control = props.children({
    id: props.id,
    'aria-describedby': [hintId, errorId].filter(Boolean).join(' ') || undefined,
    'aria-invalid': props.error ? true : undefined,
  });
  return (
    <div class={`field${props.check ? ' field-check' : ''}`}>
      {props.check ? control : null}
      <label for={props.id}>
        {props.label}
        {props.required ? <span class="required"> (required)</span> : null}
      </label>
      {props.check ? null : control}
      {props.hint && (
        <p id={hintId} class="hint">
          {props.hint}
        </p>
      )}
      {props.error && (
        <p id={errorId} class="field-error">
          {props.error}
        </p>
      )}
    </div>
  );
}

type Control =
  | {
      kind?: 'text' | 'number';
      value: string;
      onInput: (value: string) => void;
      step?: string;
      inputMode?: 'numeric' | 'decimal';
      autoComplete?: string;
      type?: 'text' | 'search' | 'datetime-local';
    }
  | { kind: 'textarea'; value: string; onInput: (value: string) => void; rows?: number }
  | { kind: 'select'; value: string; onInput: (value: string) => void; options: { value: string; label: string }[] }
  | { kind: 'checkbox'; checked: boolean; onChange: (checked: boolean) => void };

export type FieldProps = Common & { disabled?: boolean } & Control;

/** A standard control in the frame. */
export function Field(props: FieldProps) {
  const value = (e: Event) => (e.currentTarget as HTMLInputElement).value;
  const { disabled, required } = props;
  return (
    <FieldFrame
      id={props.id}
      label={props.label}
      hint={props.hint}
      error={props.error}
      required={required}
      check={props.kind === 'checkbox'}
    >
      {(aria) => {
        if (props.kind === 'checkbox') {
          return (
            <input
              {...aria}
              type="checkbox"
              checked={props.checked}
              disabled={disabled}
              onChange={(e) => props.onChange((e.currentTarget as HTMLInputElement).checked)}
            />
          );
        }
        if (props.kind === 'textarea') {
          return (
            <textarea
              {...aria}
              rows={props.rows ?? 4}
              value={props.value}
              required={required}
              disabled={disabled}
              onInput={(e) => props.onInput(value(e))}
            />
          );
        }
        if (props.kind === 'select') {
          return (
            <select {...aria} value={props.value} disabled={disabled} onChange={(e) => props.onInput(value(e))}>
              {props.options.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          );
        }
        return (
          // (Preact types `type` as one union per input family; the cast picks one, the value is any of ours.)
          <input
            {...aria}
            {...({ type: props.type ?? 'text' } as { type: 'text' })}
            step={props.step}
            value={props.value}
            required={required}
            disabled={disabled}
            inputMode={props.inputMode ?? (props.kind === 'number' ? 'numeric' : undefined)}
            autoComplete={props.autoComplete ?? 'off'}
            onInput={(e) => props.onInput(value(e))}
          />
        );
      }}
    </FieldFrame>
  );
}

/** The form's own error (not about one field): an alert that takes focus after a failed submit. */
export function FormError(props: { id: string; message: string | null }) {
  return (
    <div id={props.id} class="form-error" role="alert" tabIndex={-1}>
      {props.message && <p>{props.message}</p>}
    </div>
  );
}

/** Focus the first invalid control of a form, else its error panel (after a refused submit). */
export function focusFirstError(form: HTMLElement | null, errorId: string): void {
  requestAnimationFrame(() => {
    const invalid = form?.querySelector<HTMLElement>('[aria-invalid="true"]');
    (invalid ?? document.getElementById(errorId))?.focus();
  });
}
