// The cockpit (GET /api/cockpit/summary): tiles for agents, cost and activity, and the tasks of
// each project as a table.

import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, Page } from '../page.tsx';

type Summary = Schemas['CockpitSummary'];

const usd = new Intl.NumberFormat('en', { style: 'currency', currency: 'USD', maximumFractionDigits: 2 });
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

function Tile(props: { label: string; value: string | number; detail?: string }) {
  return (
    <li class="tile">
      <span class="tile-label">{props.label}</span>
      <span class="tile-value">{props.value}</span>
      {props.detail && <span class="tile-detail">{props.detail}</span>}
    </li>
  );
}

export function Cockpit() {
  const [summary, setSummary] = useState<Summary | null>(null);
  const [error, setError] = useState<ApiErrorBody | null>(null);

  async function load() {
    setError(null);
    const { data, error: failed } = await api.GET('/api/cockpit/summary');
    if (data) setSummary(data);
    else setError((failed as ApiErrorBody | undefined) ?? { error: 'network', message: 'no answer' });
  }
  useEffect(() => {
    void load();
  }, []);

  return (
    <Page title="Cockpit">
      {error ? <LoadFailed error={error} retry={load} /> : !summary ? <Loading /> : (
        <>
          <ul class="tiles" aria-label="At a glance">
            <Tile label="Agents active" value={summary.agents.active} detail={`${summary.agents.configured} configured, ${summary.agents.max_concurrent} at most at once`} />
            <Tile label="Cost, last 30 days" value={usd.format(summary.cost.usd)} />
            <Tile label="Projects" value={summary.projects.length} />
            <Tile label="Last task created" value={when(summary.activity.last_task_created)} />
            <Tile label="Last task completed" value={when(summary.activity.last_task_completed)} />
          </ul>
          <section aria-labelledby="tasks-heading">
            <h2 id="tasks-heading">Tasks by project</h2>
            {summary.projects.length === 0 ? <p>No projects yet.</p> : (
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">Open, in progress and done tasks of each project</caption>
                  <thead><tr><th scope="col">Project</th><th scope="col" class="num">Open</th><th scope="col" class="num">In progress</th><th scope="col" class="num">Done</th></tr></thead>
                  <tbody>
                    {summary.projects.map((p) => (
                      <tr key={p.name}><th scope="row">{p.name}</th><td class="num">{p.tasks.open}</td><td class="num">{p.tasks.in_progress}</td><td class="num">{p.tasks.done}</td></tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
          <p class="muted">Server version {summary.version}</p>
        </>
      )}
    </Page>
  );
}
