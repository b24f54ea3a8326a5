// Usage (GET /api/agent-chat/usage/summary): today's (UTC) requests, tokens and cost per profile,
// and how much of its daily cost cap each has used: a <meter> with the percentage written beside
// it, and the word "warning" from WARN_PCT on (never colour alone). The route has no admin check
// (any account may read usage); the navigation shows the page to admins only.

import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, NeedsAdmin, Page } from '../page.tsx';
import { problem } from '../ui/errors.ts';
import { handler } from '../ui/handler.ts';

type Row = Schemas['UsageSummaryRow'];
export const WARN_PCT = 80;

const usd = new Intl.NumberFormat('en', { style: 'currency', currency: 'USD', maximumFractionDigits: 4 });
const count = new Intl.NumberFormat('en');
export const pctText = (pct: number) => `${pct < 10 && pct > 0 ? pct.toFixed(1) : count.format(Math.round(pct))} %`;

function CapBar(props: { row: Row }) {
  const { row } = props;
  if (row.cap_cents === 0) return <span class="muted">no cap</span>;
  const warn = row.cap_pct >= WARN_PCT;
  const label = `Share of the daily cap used by ${row.profile_name}`;
  return (
    <span class={`cap${warn ? ' cap-warn' : ''}`}>
      <meter
        min={0}
        max={100}
        low={WARN_PCT}
        high={WARN_PCT}
        optimum={0}
        value={Math.min(row.cap_pct, 100)}
        aria-label={label}
      />
      <span class="cap-text">
        {pctText(row.cap_pct)}
        {warn && <strong class="cap-flag"> warning{row.cap_pct >= 100 ? ': cap reached' : ''}</strong>}
      </span>
    </span>
  );
}

export function Usage() {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);

  async function load() {
    setError(null);
    const { data, error: refused, response } = await api.GET('/api/agent-chat/usage/summary');
    if (data) setRows(data);
    else setError({ status: response.status, body: problem(refused) });
  }
  useEffect(() => {
    void load();
  }, []);

  if (error?.status === 403) return <NeedsAdmin error={error.body} />;
  return (
    <Page
      title="Usage"
      actions={
        rows && (
          <button type="button" class="secondary" onClick={handler(load)}>
            Refresh
          </button>
        )
      }
    >
      <p class="muted">
        Today ({new Date().toISOString().slice(0, 10)}, UTC), per profile. A warning shows from {WARN_PCT} % of the
        daily cost cap.
      </p>
      {error ? (
        <LoadFailed error={error.body} retry={handler(load)} />
      ) : !rows ? (
        <Loading />
      ) : rows.length === 0 ? (
        <p>No profiles yet.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Today's usage per profile</caption>
            <thead>
              <tr>
                <th scope="col">Profile</th>
                <th scope="col" class="num">
                  Requests
                </th>
                <th scope="col" class="num">
                  Input tokens
                </th>
                <th scope="col" class="num">
                  Output tokens
                </th>
                <th scope="col" class="num">
                  Cost
                </th>
                <th scope="col" class="num">
                  Daily cap
                </th>
                <th scope="col">Cap used</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.profile_slug} data-profile={r.profile_slug}>
                  <th scope="row">
                    {r.profile_name} <code class="muted">{r.profile_slug}</code>
                  </th>
                  <td class="num">{count.format(r.today_requests)}</td>
                  <td class="num">{count.format(r.today_input_tokens)}</td>
                  <td class="num">{count.format(r.today_output_tokens)}</td>
                  <td class="num">{usd.format(r.today_cost_cents / 100)}</td>
                  <td class="num">{r.cap_cents === 0 ? 'none' : usd.format(r.cap_cents / 100)}</td>
                  <td>
                    <CapBar row={r} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
