// Audit (admin; GET /api/agent-chat/audit): security events newest first, a page of PAGE_SIZE at a
// time. A severity filter (a labelled select; changing it starts again at the newest), "Older
// entries" (the next page: `before` the last entry's `position`, so nothing repeats or is skipped
// while new entries arrive) and "Newest" (back to the first page). Severity is written as a word,
// never colour alone. Reached without the admin role, the server's 403 shows as "needs admin".

import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, NeedsAdmin, Page } from '../page.tsx';
import { problem } from '../ui/errors.ts';
import { Field } from '../ui/field.tsx';
import { announce } from '../ui/toast.tsx';
import { handler } from '../ui/handler.ts';

type Entry = Schemas['AuditEntry'];
type Severity = Entry['severity'];
export const PAGE_SIZE = 10;
const SEVERITIES: Severity[] = ['info', 'warning', 'critical'];

const detailText = (detail: Entry['detail']) =>
  Object.entries(detail)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('; ');
const actorText = (actor: Entry['actor']) => (actor.id ? `${actor.kind} ${actor.id.slice(0, 8)}` : actor.kind);

interface Shown {
  entries: Entry[];
  first: number;
  severity: Severity | '';
}

export function Audit() {
  const [severity, setSeverity] = useState<Severity | ''>('');
  // The `before` of each page shown so far: [] is the newest page.
  const [trail, setTrail] = useState<string[]>([]);
  // What is on screen, with the page and filter it was read for (the answer to the latest ask only).
  const [shown, setShown] = useState<Shown | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);
  const asked = useRef(0);
  const before = trail.at(-1);

  async function load() {
    const seq = ++asked.current;
    setError(null);
    const query = { limit: PAGE_SIZE, ...(severity ? { severity } : {}), ...(before ? { before } : {}) };
    const { data, error: refused, response } = await api.GET('/api/agent-chat/audit', { params: { query } });
    if (seq !== asked.current) return;
    if (!data) return setError({ status: response.status, body: problem(refused) });
    const first = trail.length * PAGE_SIZE + 1;
    setShown({ entries: data, first, severity });
    if (trail.length > 0 || severity)
      announce(data.length === 0 ? 'No entries.' : `Entries ${first} to ${first + data.length - 1}.`);
  }
  useEffect(() => {
    void load();
  }, [severity, before]);

  if (error?.status === 403) return <NeedsAdmin error={error.body} />;
  const entries = shown?.entries ?? null;
  const hasOlder = (entries?.length ?? 0) === PAGE_SIZE;
  const older = () => {
    if (hasOlder && entries) setTrail((t) => [...t, entries.at(-1)!.position]);
  };
  const newest = () => {
    if (trail.length > 0) setTrail([]);
  };
  const first = shown?.first ?? 1;
  return (
    <Page title="Audit">
      <div class="audit-filter">
        <Field
          id="audit-severity"
          label="Severity"
          kind="select"
          value={severity}
          options={[{ value: '', label: 'All severities' }, ...SEVERITIES.map((s) => ({ value: s, label: s }))]}
          onInput={(v) => {
            setTrail([]);
            setSeverity(v as Severity | '');
          }}
        />
      </div>
      {error ? (
        <LoadFailed error={error.body} retry={handler(load)} />
      ) : !entries ? (
        <Loading />
      ) : (
        <>
          {entries.length === 0 ? (
            <p>
              No entries{shown?.severity ? ` of severity ${shown.severity}` : ''}
              {first > 1 ? ' older than these' : ''}.
            </p>
          ) : (
            <>
              <p class="muted" id="audit-range">
                Entries {first} to {first + entries.length - 1}, newest first
                {shown?.severity ? `, severity ${shown.severity}` : ''}.
              </p>
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">Audit entries, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Time</th>
                      <th scope="col">Type</th>
                      <th scope="col">Severity</th>
                      <th scope="col">Profile</th>
                      <th scope="col">Actor</th>
                      <th scope="col">Details</th>
                    </tr>
                  </thead>
                  <tbody>
                    {entries.map((e) => (
                      <tr key={e.id} data-audit-id={e.id}>
                        <td>
                          <time dateTime={e.created_at}>{new Date(e.created_at).toLocaleString()}</time>
                        </td>
                        <th scope="row">{e.event_type}</th>
                        <td class={`severity severity-${e.severity}`}>{e.severity}</td>
                        <td>{e.profile_slug ? <code>{e.profile_slug}</code> : <span class="muted">none</span>}</td>
                        <td>{actorText(e.actor)}</td>
                        <td class="audit-detail">{detailText(e.detail)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          )}
          <div class="pager">
            <button type="button" class="secondary" aria-disabled={first === 1 ? 'true' : undefined} onClick={newest}>
              Newest
            </button>
            <button type="button" class="secondary" aria-disabled={hasOlder ? undefined : 'true'} onClick={older}>
              Older entries
            </button>
          </div>
        </>
      )}
    </Page>
  );
}
