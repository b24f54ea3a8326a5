// The state a checked form keeps, and the two moments every such form handles alike: its own
// checks refusing (errors onto the fields, focus to the first) and the server refusing (the
// answer's errors onto the fields they name, `serverErrors`, the rest the form's own error).

import { useRef, useState } from 'preact/hooks';
import { focusFirstError } from './field.tsx';
import { problem, serverErrors, type FieldErrors } from './errors.ts';

export function useFormState(errorId: string) {
  const form = useRef<HTMLFormElement>(null);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return {
    form,
    errors,
    formError,
    busy,
    setBusy,
    /** The browser's own checks: true when they pass (errors cleared), else they are shown and focus goes to the first. */
    passes(found: FieldErrors): boolean {
      setFormError(null);
      setErrors(found);
      if (Object.keys(found).length === 0) return true;
      focusFirstError(form.current, errorId);
      return false;
    },
    /** A refused request: its error body onto the fields of `known`, the rest the form's error; focus to the first. */
    refused(error: unknown, known: readonly string[]): void {
      const r = serverErrors(problem(error), known);
      setErrors(r.fields);
      setFormError(r.form);
      focusFirstError(form.current, errorId);
    },
  };
}
