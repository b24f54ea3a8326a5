// A profile's history, read from its stream in the log: every revision with its changed fields,
// actor and time; a diff of any two revisions (each the profile `as_of` that revision's time);
// and the whole profile as of any instant.

import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../../api/client.ts';
import { LoadFailed, Loading } from '../../page.tsx';
import { problem } from '../../ui/errors.ts';
import { Field, FormError } from '../../ui/field.tsx';
import { handler } from '../../ui/handler.ts';

type Entry = Schemas['ProfileHistoryEntry'];
type Profile = Schemas['Profile'];

const when = (iso: string) => new Date(iso).toLocaleString();
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
/** Fields that change with every revision and say nothing about it. */
const NOISE = new Set(['updated_at']);

export function History(props: { slug: string; refresh: number }) {
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [names, setNames] = useState<Record<string, string>>({});
  const [error, setError] = useState<ApiErrorBody | null>(null);

  async function load() {
    setError(null);
    const { data, error: refused } = await api.GET('/api/agent-chat/profiles/{slug}/history', {
      params: { path: { slug: props.slug } },
    });
    if (data) setEntries(data);
    else setError(problem(refused));
  }
  useEffect(() => {
    void load();
  }, [props.slug, props.refresh]);
  useEffect(() => {
    // Actors by name where the account list knows them (admins only, as this page is).
    void api.GET('/api/admin/users', { params: { query: { limit: 200 } } }).then(({ data }) => {
      if (data) setNames(Object.fromEntries(data.users.map((u) => [u.id, u.username])));
    });
  }, []);

  const actor = (a: Entry['actor']) => (a.id && names[a.id] ? names[a.id] : `${a.kind}${a.id ? ` ${a.id}` : ''}`);

  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      {error ? (
        <LoadFailed error={error} retry={handler(load)} />
      ) : !entries ? (
        <Loading />
      ) : (
        <>
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Revisions of the profile, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col" class="num">
                    Revision
                  </th>
                  <th scope="col">Change</th>
                  <th scope="col">Fields</th>
                  <th scope="col">By</th>
                  <th scope="col">When</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <tr key={e.revision}>
                    <th scope="row" class="num">
                      {e.revision}
                    </th>
                    <td>{e.event_type}</td>
                    <td>{e.changed_fields.join(', ')}</td>
                    <td>{actor(e.actor)}</td>
                    <td>
                      <time dateTime={e.at}>{when(e.at)}</time>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {entries.length > 1 && <Compare slug={props.slug} entries={entries} />}
          <AsOf slug={props.slug} />
        </>
      )}
    </section>
  );
}

async function asOf(slug: string, at: string): Promise<{ profile: Profile } | { error: ApiErrorBody }> {
  const { data, error } = await api.GET('/api/agent-chat/profiles/{slug}', {
    params: { path: { slug }, query: { as_of: at } },
  });
  return data ? { profile: data } : { error: problem(error) };
}

function Compare(props: { slug: string; entries: Entry[] }) {
  const { entries } = props;
  const options = entries.map((e) => ({
    value: String(e.revision),
    label: `Revision ${e.revision}: ${e.event_type}, ${when(e.at)}`,
  }));
  const [from, setFrom] = useState(String(entries[entries.length - 2]!.revision));
  const [to, setTo] = useState(String(entries[entries.length - 1]!.revision));
  const [diff, setDiff] = useState<{ field: string; before: unknown; after: unknown }[] | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  async function compare(event: Event) {
    event.preventDefault();
    setMessage(null);
    const at = (rev: string) => entries.find((e) => String(e.revision) === rev)!.at;
    const [a, b] = await Promise.all([asOf(props.slug, at(from)), asOf(props.slug, at(to))]);
    if ('error' in a) return setMessage(a.error.message);
    if ('error' in b) return setMessage(b.error.message);
    const fields = Object.keys(b.profile).filter((f) => !NOISE.has(f)) as (keyof Profile)[];
    setDiff(
      fields
        .filter((f) => shown(a.profile[f]) !== shown(b.profile[f]))
        .map((f) => ({ field: f, before: a.profile[f], after: b.profile[f] })),
    );
  }

  return (
    <form class="form inline" onSubmit={handler(compare)} aria-labelledby="compare-heading">
      <h3 id="compare-heading">Compare two revisions</h3>
      <FormError id="compare-error" message={message} />
      <Field id="compare-from" label="From" kind="select" options={options} value={from} onInput={setFrom} />
      <Field id="compare-to" label="To" kind="select" options={options} value={to} onInput={setTo} />
      <div class="actions">
        <button type="submit">Show differences</button>
      </div>
      {diff && (
        <div class="table-wrap" aria-live="polite">
          {diff.length === 0 ? (
            <p>
              No differences between revisions {from} and {to}.
            </p>
          ) : (
            <table class="diff">
              <caption>
                Differences from revision {from} to revision {to}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Revision {from}</th>
                  <th scope="col">Revision {to}</th>
                </tr>
              </thead>
              <tbody>
                {diff.map((d) => (
                  <tr key={d.field}>
                    <th scope="row">{d.field}</th>
                    <td>
                      <del>{shown(d.before)}</del>
                    </td>
                    <td>
                      <ins>{shown(d.after)}</ins>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </form>
  );
}

function AsOf(props: { slug: string }) {
  const [instant, setInstant] = useState('');
  const [result, setResult] = useState<{ profile: Profile } | { error: ApiErrorBody } | null>(null);

  async function show(event: Event) {
    event.preventDefault();
    const date = new Date(instant);
    if (instant === '' || Number.isNaN(date.getTime())) {
      setResult({ error: { error: 'validation_failed', message: 'Enter a date and time.' } });
      return;
    }
    setResult(await asOf(props.slug, date.toISOString()));
  }

  return (
    <form class="form inline" onSubmit={handler(show)} aria-labelledby="as-of-heading">
      <h3 id="as-of-heading">The profile as it was</h3>
      <Field
        id="as-of"
        label="As of (your local time)"
        type="datetime-local"
        step="1"
        value={instant}
        onInput={setInstant}
        error={
          result && 'error' in result
            ? result.error.error === 'profile_not_found'
              ? 'The profile did not exist yet.'
              : result.error.message
            : undefined
        }
      />
      <div class="actions">
        <button type="submit">Show</button>
      </div>
      {result && 'profile' in result && (
        <dl class="as-of" aria-live="polite">
          {Object.entries(result.profile).map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{shown(v)}</dd>
            </div>
          ))}
        </dl>
      )}
    </form>
  );
}
