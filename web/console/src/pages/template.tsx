// One bot template (admin), /templates/:slug: its default prompt and security settings, its
// starter memories, and instantiating it with overrides; the new profile's page opens after.

import { useLocation, useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, NeedsAdmin, Page } from '../page.tsx';
import { checkLongText, checkNumber, checkRequiredText, checkSlug, TIERS, type RangedField } from '../profile-rules.ts';
import { problem } from '../ui/errors.ts';
import { Field, FormError } from '../ui/field.tsx';
import { useFormState } from '../ui/form-state.ts';
import { toast } from '../ui/toast.tsx';
import { handler } from '../ui/handler.ts';

type Template = Schemas['BotTemplate'];
type Body = Schemas['InstantiateTemplateRequest'];

export function TemplatePage() {
  const { params } = useRoute();
  const slug = params.slug!;
  const [template, setTemplate] = useState<Template | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);

  async function load() {
    setError(null);
    const { data, error: refused, response } = await api.GET('/api/templates/{slug}', { params: { path: { slug } } });
    if (data) setTemplate(data);
    else setError({ status: response.status, body: problem(refused) });
  }
  useEffect(() => {
    void load();
  }, [slug]);

  if (error?.status === 403) return <NeedsAdmin error={error.body} />;
  if (error)
    return (
      <Page title={`Template ${slug}`}>
        <LoadFailed error={error.body} retry={handler(load)} />
      </Page>
    );
  if (!template)
    return (
      <Page title={`Template ${slug}`}>
        <Loading />
      </Page>
    );
  const d = template.default_security;
  return (
    <Page title={`Template: ${template.name}`}>
      <p>{template.description}</p>
      <section aria-labelledby="defaults-heading">
        <h2 id="defaults-heading">Defaults</h2>
        <dl class="pairs">
          <div>
            <dt>Security tier</dt>
            <dd>{d.security_tier}</dd>
          </div>
          <div>
            <dt>Daily cost cap</dt>
            <dd>{d.cost_cap_daily_cents} cents</dd>
          </div>
          <div>
            <dt>Requests per minute</dt>
            <dd>{d.rate_limit_rpm}</dd>
          </div>
          <div>
            <dt>Requests per day</dt>
            <dd>{d.rate_limit_rpd}</dd>
          </div>
          <div>
            <dt>Scrub personal data</dt>
            <dd>{d.pii_scrub ? 'yes' : 'no'}</dd>
          </div>
        </dl>
        <h3>System prompt</h3>
        <pre class="prompt">{template.default_system_prompt}</pre>
      </section>
      <section aria-labelledby="memories-heading">
        <h2 id="memories-heading">Starter memories ({template.starter_memories.length})</h2>
        <ul class="memories">
          {template.starter_memories.map((m) => (
            <li key={m.title}>
              <strong>{m.title}</strong>
              <p>{m.content}</p>
            </li>
          ))}
        </ul>
      </section>
      <Instantiate template={template} />
    </Page>
  );
}

const OVERRIDES: { field: RangedField & keyof Body; label: string }[] = [
  { field: 'cost_cap_daily_cents', label: 'Daily cost cap (cents)' },
  { field: 'rate_limit_rpm', label: 'Requests per minute' },
  { field: 'rate_limit_rpd', label: 'Requests per day' },
];
const FIELDS = [
  'slug',
  'name',
  'description',
  'system_prompt_override',
  'seed_memories',
  'security_tier',
  'cost_cap_daily_cents',
  'rate_limit_rpm',
  'rate_limit_rpd',
] as const;

function Instantiate(props: { template: Template }) {
  const { template } = props;
  const { route } = useLocation();
  const [values, setValues] = useState<Record<string, string>>({
    slug: '',
    name: '',
    description: '',
    prompt: '',
    security_tier: '',
  });
  const [seed, setSeed] = useState(true);
  const { form, errors, formError, busy, setBusy, passes, refused } = useFormState('instantiate-error');
  const set = (f: string) => (v: string) => setValues((old) => ({ ...old, [f]: v }));

  function check(): { body: Body } | { errors: Record<string, string> } {
    const found: Record<string, string> = {};
    const body: Body = { slug: values.slug!.trim(), name: values.name!.trim(), seed_memories: seed };
    const s = checkSlug(body.slug);
    if (s) found.slug = s;
    const n = checkRequiredText('name', values.name!);
    if (n) found.name = n;
    if (values.description !== '') {
      const e = checkLongText('description', values.description!);
      if (e) found.description = e;
      else body.description = values.description;
    }
    if (values.prompt !== '') {
      const e = checkLongText('system_prompt', values.prompt!);
      if (e) found.system_prompt_override = e;
      else body.system_prompt_override = values.prompt;
    }
    if (values.security_tier !== '') body.security_tier = Number(values.security_tier);
    for (const { field } of OVERRIDES) {
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
    const { data, error } = await api.POST('/api/templates/{slug}/instantiate', {
      params: { path: { slug: template.slug } },
      body: checked.body,
    });
    setBusy(false);
    if (data) {
      toast(
        `Profile ${data.slug} created from ${template.name}, with ${data.seeded_memory_count} starter ${data.seeded_memory_count === 1 ? 'memory' : 'memories'}.`,
      );
      route(`/profiles/${data.slug}`);
      return;
    }
    refused(error, FIELDS);
  }

  const d = template.default_security;
  const tiers = [{ value: '', label: `Template default (${d.security_tier})` }, ...TIERS];
  return (
    <section aria-labelledby="instantiate-heading">
      <h2 id="instantiate-heading">Make a profile from this template</h2>
      <form ref={form} class="form grid" onSubmit={handler(submit)} noValidate>
        <FormError id="instantiate-error" message={formError} />
        <Field
          id="tmpl-slug"
          label="Profile slug"
          required
          value={values.slug!}
          onInput={set('slug')}
          error={errors.slug}
          hint="Lowercase letters, digits and hyphens, 1 to 60; cannot be renamed later."
        />
        <Field
          id="tmpl-name"
          label="Profile name"
          required
          value={values.name!}
          onInput={set('name')}
          error={errors.name}
        />
        <Field
          id="tmpl-description"
          label="Description"
          kind="textarea"
          rows={2}
          value={values.description!}
          onInput={set('description')}
          error={errors.description}
          hint="Leave empty for the template's description."
        />
        <Field
          id="tmpl-prompt"
          label="System prompt override"
          kind="textarea"
          rows={4}
          value={values.prompt!}
          onInput={set('prompt')}
          error={errors.system_prompt_override}
          hint="Leave empty for the template's prompt, shown above."
        />
        <Field
          id="tmpl-tier"
          label="Security tier"
          kind="select"
          options={tiers}
          value={values.security_tier!}
          onInput={set('security_tier')}
          error={errors.security_tier}
        />
        {OVERRIDES.map(({ field, label }) => (
          <Field
            key={field}
            id={`tmpl-${field}`}
            label={label}
            kind="number"
            value={values[field] ?? ''}
            onInput={set(field)}
            error={errors[field]}
            hint={`Leave empty for the template's ${d[field].toLocaleString('en')}.`}
          />
        ))}
        <Field
          id="tmpl-seed"
          label={`Seed the ${template.starter_memories.length} starter memories as knowledge`}
          kind="checkbox"
          checked={seed}
          onChange={setSeed}
          error={errors.seed_memories}
        />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Creating…' : 'Create profile'}
          </button>
        </div>
      </form>
    </section>
  );
}
