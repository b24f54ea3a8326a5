// One labelled form control: a visible <label>, an optional hint and error, both tied to the
// control with aria-describedby (the error also sets aria-invalid). Text, number, multi-line,
// select and checkbox share it, so every input of every form is labelled the same way.

import type { ComponentChildren } from 'preact';

interface Common {
  id: string;
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  disabled?: boolean;
}

type Control =
  | { kind?: 'text' | 'number'; value: string; onInput: (value: string) => void; required?: boolean; step?: string; inputMode?: 'numeric' | 'decimal'; autoComplete?: string; type?: 'text' | 'search' | 'datetime-local' }
  | { kind: 'textarea'; value: string; onInput: (value: string) => void; required?: boolean; rows?: number }
  | { kind: 'select'; value: string; onInput: (value: string) => void; options: { value: string; label: string }[] }
  | { kind: 'checkbox'; checked: boolean; onChange: (checked: boolean) => void };

export type FieldProps = Common & Control;

export function Field(props: FieldProps) {
  const hintId = props.hint ? `${props.id}-hint` : undefined;
  const errorId = props.error ? `${props.id}-error` : undefined;
  const describedBy = [errorId, hintId].filter(Boolean).join(' ') || undefined;
  const aria = { 'aria-describedby': describedBy, 'aria-invalid': props.error ? true : undefined } as const;
  const value = (e: Event) => (e.currentTarget as HTMLInputElement).value;
  let control: ComponentChildren;
  if (props.kind === 'checkbox') {
    control = (
      <input id={props.id} type="checkbox" checked={props.checked} disabled={props.disabled} {...aria}
        onChange={(e) => props.onChange((e.currentTarget as HTMLInputElement).checked)} />
    );
  } else if (props.kind === 'textarea') {
    control = <textarea id={props.id} rows={props.rows ?? 4} value={props.value} required={props.required} disabled={props.disabled} {...aria} onInput={(e) => props.onInput(value(e))} />;
  } else if (props.kind === 'select') {
    control = (
      <select id={props.id} value={props.value} disabled={props.disabled} {...aria} onChange={(e) => props.onInput(value(e))}>
        {props.options.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
      </select>
    );
  } else {
    control = (
      // (Preact types `type` as one union per input family; the cast picks one, the value is any of ours.)
      <input id={props.id} {...({ type: props.type ?? 'text' } as { type: 'text' })} step={props.step} value={props.value} required={props.required} disabled={props.disabled}
        inputMode={props.inputMode ?? (props.kind === 'number' ? 'numeric' : undefined)} autoComplete={props.autoComplete ?? 'off'} {...aria}
        onInput={(e) => props.onInput(value(e))} />
    );
  }
  return (
    <div class={`field${props.kind === 'checkbox' ? ' field-check' : ''}`}>
      {props.kind === 'checkbox' ? control : null}
      <label for={props.id}>{props.label}{'required' in props && props.required ? <span class="required"> (required)</span> : null}</label>
      {props.kind === 'checkbox' ? null : control}
      {props.hint && <p id={hintId} class="hint">{props.hint}</p>}
      {props.error && <p id={errorId} class="field-error">{props.error}</p>}
    </div>
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
