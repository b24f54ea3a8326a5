// Profiles (admin): the list, and creating one with the spec's create fields in a dialog. The
// client checks mirror the server's (profile-rules.ts); a 400 the server still finds lands on its
// field. A created profile opens its own page. Reached without the admin role, the server's 403
// shows as the "needs admin" page.

import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, NeedsAdmin, Page } from '../page.tsx';
import { checkNumber, checkRequiredText, checkSlug, checkLongText, TIERS, type RangedField } from '../profile-rules.ts';
import { Dialog } from '../ui/dialog.tsx';
import { problem } from '../ui/errors.ts';
import { Field, FormError } from '../ui/field.tsx';
import { useFormState } from '../ui/form-state.ts';
import { toast } from '../ui/toast.tsx';
import { handler } from '../ui/handler.ts';

type Profile = Schemas['Profile'];
type CreateBody = Schemas['CreateProfileRequest'];

export function Profiles() {
  const [profiles, setProfiles] = useState<Profile[] | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);
  const [creating, setCreating] = useState(false);

  async function load() {
    setError(null);
    const { data, error: refused, response } = await api.GET('/api/agent-chat/profiles');
    if (data) setProfiles(data);
    else setError({ status: response.status, body: problem(refused) });
  }
  useEffect(() => {
    void load();
  }, []);

  if (error?.status === 403) return <NeedsAdmin error={error.body} />;
  return (
    <Page
      title="Profiles"
      actions={
        profiles && (
          <button type="button" onClick={() => setCreating(true)}>
            New profile
          </button>
        )
      }
    >
      {error ? (
        <LoadFailed error={error.body} retry={handler(load)} />
      ) : !profiles ? (
        <Loading />
      ) : profiles.length === 0 ? (
        <p>No profiles yet.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Agent profiles</caption>
            <thead>
              <tr>
                <th scope="col">Profile</th>
                <th scope="col">Slug</th>
                <th scope="col" class="num">
                  Tier
                </th>
                <th scope="col">Model</th>
                <th scope="col">Enabled</th>
                <th scope="col">Knowledge</th>
              </tr>
            </thead>
            <tbody>
              {profiles.map((p) => (
                <tr key={p.id}>
                  <th scope="row">
                    <a href={`/profiles/${p.slug}`}>{p.name}</a>
                  </th>
                  <td>
                    <code>{p.slug}</code>
                  </td>
                  <td class="num">{p.security_tier}</td>
                  <td>{p.model}</td>
                  <td>{p.enabled ? 'yes' : 'no (disabled)'}</td>
                  <td>
                    <a href={`/bots/${p.id}/knowledge`}>
                      {p.knowledge_search_enabled ? 'on' : 'off'}
                      <span class="visually-hidden">: knowledge of {p.name}</span>
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {creating && <CreateProfile onClose={() => setCreating(false)} />}
    </Page>
  );
}

const NUMBERS: { field: RangedField & keyof CreateBody; label: string; hint: string }[] = [
  { field: 'max_tokens', label: 'Max tokens', hint: '1 to 200,000; default 1,024.' },
  {
    field: 'cost_cap_daily_cents',
    label: 'Daily cost cap (cents)',
    hint: 'Real cents, not dollars; 0 or more; default 500.',
  },
  { field: 'rate_limit_rpm', label: 'Requests per minute', hint: 'At least 1; default 20.' },
  { field: 'rate_limit_rpd', label: 'Requests per day', hint: 'At least 1; default 1,000.' },
];
const FIELDS = [
  'slug',
  'name',
  'security_tier',
  'model',
  'system_prompt',
  'max_tokens',
  'rate_limit_rpm',
  'rate_limit_rpd',
  'cost_cap_daily_cents',
] as const;

function CreateProfile(props: { onClose: () => void }) {
  const { route } = useLocation();
  const [values, setValues] = useState<Record<string, string>>({
    slug: '',
    name: '',
    security_tier: '3',
    model: '',
    system_prompt: '',
  });
  const { form, errors, formError, busy, setBusy, passes, refused } = useFormState('create-profile-error');
  const set = (field: string) => (value: string) => setValues((v) => ({ ...v, [field]: value }));

  /** The body to send (fields left empty take the server's defaults), or the errors by field. */
  function check(): { body: CreateBody } | { errors: Record<string, string> } {
    const found: Record<string, string> = {};
    const body: CreateBody = {
      slug: values.slug!.trim(),
      name: values.name!.trim(),
      security_tier: Number(values.security_tier),
    };
    const slug = checkSlug(body.slug);
    if (slug) found.slug = slug;
    const name = checkRequiredText('name', values.name!);
    if (name) found.name = name;
    if (values.model!.trim() !== '') {
      const model = checkRequiredText('model', values.model!);
      if (model) found.model = model;
      else body.model = values.model!.trim();
    }
    const prompt = checkLongText('system_prompt', values.system_prompt!);
    if (prompt) found.system_prompt = prompt;
    else if (values.system_prompt !== '') body.system_prompt = values.system_prompt;
    for (const { field } of NUMBERS) {
      const text = values[field] ?? '';
      if (text.trim() === '') continue;
      const r = checkNumber(field, text);
      if ('error' in r) found[field] = r.error;
      else body[field] = r.value;
    }
    return Object.keys(found).length ? { errors: found } : { body };
  }

  async function submit(event: Event) {
    event.preventDefault();
    if (busy) return;
    const checked = check();
    if (!passes('errors' in checked ? checked.errors : {}) || !('body' in checked)) return;
    setBusy(true);
    const { data, error } = await api.POST('/api/agent-chat/profiles', { body: checked.body });
    setBusy(false);
    if (data) {
      toast(`Profile ${data.name} created.`);
      props.onClose();
      route(`/profiles/${data.slug}`);
      return;
    }
    refused(error, FIELDS);
  }

  return (
    <Dialog title="New profile" onClose={props.onClose}>
      <form ref={form} class="form" onSubmit={handler(submit)} noValidate>
        <FormError id="create-profile-error" message={formError} />
        <Field
          id="new-slug"
          label="Slug"
          required
          value={values.slug!}
          onInput={set('slug')}
          error={errors.slug}
          hint="Lowercase letters, digits and hyphens, 1 to 60; cannot be renamed later."
        />
        <Field id="new-name" label="Name" required value={values.name!} onInput={set('name')} error={errors.name} />
        <Field
          id="new-tier"
          label="Security tier"
          kind="select"
          options={TIERS}
          value={values.security_tier!}
          onInput={set('security_tier')}
          error={errors.security_tier}
          hint="Only tier 1 answers the public chat."
        />
        <Field
          id="new-model"
          label="Model"
          value={values.model!}
          onInput={set('model')}
          error={errors.model}
          hint="Leave empty for the server's default model."
        />
        <Field
          id="new-prompt"
          label="System prompt"
          kind="textarea"
          value={values.system_prompt!}
          onInput={set('system_prompt')}
          error={errors.system_prompt}
        />
        {NUMBERS.map(({ field, label, hint }) => (
          <Field
            key={field}
            id={`new-${field}`}
            label={label}
            kind="number"
            value={values[field] ?? ''}
            onInput={set(field)}
            error={errors[field]}
            hint={hint}
          />
        ))}
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Creating…' : 'Create profile'}
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
