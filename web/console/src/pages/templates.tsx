// Bot templates (admin; /api/templates is an admin surface): the bundled templates, and one
// template's page with its defaults, starter memories and the instantiate form.

import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, NeedsAdmin, Page } from '../page.tsx';
import { problem } from '../ui/errors.ts';
import { handler } from '../ui/handler.ts';

type Summary = Schemas['BotTemplateSummary'];

export function Templates() {
  const [templates, setTemplates] = useState<Summary[] | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);

  async function load() {
    setError(null);
    const { data, error: refused, response } = await api.GET('/api/templates');
    if (data) setTemplates(data);
    else setError({ status: response.status, body: problem(refused) });
  }
  useEffect(() => {
    void load();
  }, []);

  if (error?.status === 403) return <NeedsAdmin error={error.body} />;
  return (
    <Page title="Bot templates">
      <p class="muted">Each template makes a pre-tuned profile, with starter knowledge if you want it.</p>
      {error ? (
        <LoadFailed error={error.body} retry={handler(load)} />
      ) : !templates ? (
        <Loading />
      ) : (
        <ul class="template-list">
          {templates.map((t) => (
            <li key={t.slug} class="template-card">
              <h2>
                <a href={`/templates/${t.slug}`}>{t.name}</a>
              </h2>
              <p>{t.description}</p>
              <p class="muted">
                <code>{t.slug}</code>
              </p>
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}
