// A profile's settings form: prefilled, checked in the browser as the server checks them, and
// saved with only the fields that changed (a PUT is a partial update; nothing changed, nothing
// sent). A 400 lands on its field.

import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Schemas } from '../../api/client.ts';
import { checkLongText, checkNumber, checkRequiredText, TIERS, type RangedField } from '../../profile-rules.ts';
import { problem, serverErrors } from '../../ui/errors.ts';
import { Field, FormError, focusFirstError } from '../../ui/field.tsx';
import { toast } from '../../ui/toast.tsx';
import { handler } from '../../ui/handler.ts';

type Profile = Schemas['Profile'];
type Update = Schemas['UpdateProfileRequest'];

const TEXTS = ['name', 'description', 'model', 'system_prompt'] as const;
const NUMBERS: { field: RangedField; label: string; hint?: string }[] = [
  { field: 'max_tokens', label: 'Max tokens', hint: '1 to 200,000.' },
  { field: 'temperature', label: 'Temperature', hint: '0 to 2.' },
  { field: 'cost_cap_daily_cents', label: 'Daily cost cap (cents)', hint: 'Real cents, not dollars; 0 or more.' },
  { field: 'rate_limit_rpm', label: 'Requests per minute', hint: 'At least 1.' },
  { field: 'rate_limit_rpd', label: 'Requests per day', hint: 'At least 1.' },
  { field: 'conversation_ttl_hours', label: 'Public conversation lifetime (hours)', hint: '1 to 8,760.' },
];
const FLAGS = [
  { field: 'pii_scrub', label: 'Scrub personal data from messages' },
  { field: 'knowledge_search_enabled', label: 'Ground replies in knowledge search' },
  { field: 'can_use_tools', label: 'May use the chat-service tools' },
] as const;
const FIELDS: (keyof Profile & keyof Update)[] = [
  ...TEXTS,
  'security_tier',
  ...NUMBERS.map((n) => n.field),
  ...FLAGS.map((f) => f.field),
];

type Values = Record<string, string | boolean>;
const valuesOf = (p: Profile): Values =>
  Object.fromEntries(FIELDS.map((f) => [f, typeof p[f] === 'boolean' ? p[f] : String(p[f])]));

export function Settings(props: { profile: Profile; onSaved: (p: Profile) => void }) {
  const { profile } = props;
  const [values, setValues] = useState<Values>(() => valuesOf(profile));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => setValues(valuesOf(profile)), [profile]);
  const text = (f: string) => values[f] as string;
  const set = (f: string) => (v: string | boolean) => setValues((old) => ({ ...old, [f]: v }));

  /** Only what differs from the profile as loaded, or the errors by field. */
  function changes(): { body: Update } | { errors: Record<string, string> } {
    const found: Record<string, string> = {};
    const body: Record<string, unknown> = {};
    for (const f of ['name', 'model'] as const) {
      const e = checkRequiredText(f, text(f));
      if (e) found[f] = e;
      else if (text(f).trim() !== profile[f]) body[f] = text(f).trim();
    }
    for (const f of ['description', 'system_prompt'] as const) {
      const e = checkLongText(f, text(f));
      if (e) found[f] = e;
      else if (text(f) !== profile[f]) body[f] = text(f);
    }
    if (Number(text('security_tier')) !== profile.security_tier) body.security_tier = Number(text('security_tier'));
    for (const { field } of NUMBERS) {
      const r = checkNumber(field, text(field));
      if ('error' in r) found[field] = r.error;
      else if (r.value !== profile[field]) body[field] = r.value;
    }
    for (const { field } of FLAGS) if (values[field] !== profile[field]) body[field] = values[field];
    return Object.keys(found).length ? { errors: found } : { body: body as Update };
  }

  async function submit(event: Event) {
    event.preventDefault();
    if (busy) return;
    setFormError(null);
    const checked = changes();
    if ('errors' in checked) {
      setErrors(checked.errors);
      focusFirstError(form.current, 'settings-error');
      return;
    }
    setErrors({});
    if (Object.keys(checked.body).length === 0) {
      toast('Nothing changed, nothing sent.');
      return;
    }
    setBusy(true);
    const { data, error, response } = await api.PUT('/api/agent-chat/profiles/{slug}', {
      params: { path: { slug: profile.slug } },
      body: checked.body,
    });
    setBusy(false);
    if (data) {
      toast(`Saved: ${Object.keys(checked.body).join(', ')}.`);
      props.onSaved(data);
      return;
    }
    const r = serverErrors(problem(error), FIELDS);
    setErrors(r.fields);
    setFormError(r.form);
    focusFirstError(form.current, 'settings-error');
  }

  return (
    <section aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <form ref={form} class="form grid" onSubmit={handler(submit)} noValidate>
        <FormError id="settings-error" message={formError} />
        <Field id="edit-name" label="Name" required value={text('name')} onInput={set('name')} error={errors.name} />
        <Field
          id="edit-model"
          label="Model"
          required
          value={text('model')}
          onInput={set('model')}
          error={errors.model}
        />
        <Field
          id="edit-tier"
          label="Security tier"
          kind="select"
          options={TIERS}
          value={text('security_tier')}
          onInput={set('security_tier')}
          error={errors.security_tier}
        />
        {NUMBERS.map(({ field, label, hint }) => (
          <Field
            key={field}
            id={`edit-${field}`}
            label={label}
            kind="number"
            inputMode={field === 'temperature' ? 'decimal' : 'numeric'}
            value={text(field)}
            onInput={set(field)}
            error={errors[field]}
            hint={hint}
          />
        ))}
        <Field
          id="edit-description"
          label="Description"
          kind="textarea"
          rows={2}
          value={text('description')}
          onInput={set('description')}
          error={errors.description}
        />
        <Field
          id="edit-prompt"
          label="System prompt"
          kind="textarea"
          rows={6}
          value={text('system_prompt')}
          onInput={set('system_prompt')}
          error={errors.system_prompt}
        />
        <fieldset class="flags">
          <legend>Behaviour</legend>
          {FLAGS.map(({ field, label }) => (
            <Field
              key={field}
              id={`edit-${field}`}
              label={label}
              kind="checkbox"
              checked={values[field] as boolean}
              onChange={set(field)}
              error={errors[field]}
            />
          ))}
        </fieldset>
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save changes'}
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setValues(valuesOf(profile));
              setErrors({});
              setFormError(null);
            }}
          >
            Undo edits
          </button>
        </div>
      </form>
    </section>
  );
}
