// The cockpit (GET /api/cockpit/summary and GET /api/cockpit/cost/daily?days=30): tiles for
// agents, cost and activity; live tiles from /ws/live (health, projection lag, agents and tasks by
// status, chat turns per minute); and three charts, each with a table of the same numbers: the
// tasks of each project (open, in progress, done), the agents (configured, active, at most at
// once) and the cost of each of the last 30 days.
//
// The charts (uPlot) are a lazy chunk, imported once the tiles are up (as are the daily cost and
// the live socket, so nothing competes with the summary on a first load): the tiles and tables
// never wait for it. When the live frame's agent or task counts change, the summary and the daily cost
// are read again, so tiles, tables and charts follow without a reload.

import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { liveStatus, liveStatusOpen, watchStatus, type StatusFrame } from '../live-status.ts';
import { LoadFailed, Loading, Page } from '../page.tsx';
import { handler } from '../ui/handler.ts';

type Summary = Schemas['CockpitSummary'];
type Daily = Schemas['CockpitDailyCost'];
type Charts = typeof import('./cockpit-charts.tsx');

const usd = new Intl.NumberFormat('en', { style: 'currency', currency: 'USD', maximumFractionDigits: 2 });
const usdDay = new Intl.NumberFormat('en', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});
const count = new Intl.NumberFormat('en');
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

let chartsModule: Promise<Charts> | null = null;
const loadCharts = () => (chartsModule ??= import('./cockpit-charts.tsx'));

function Tile(props: {
  label: string;
  value: string | number;
  detail?: string;
  name?: string;
  children?: ComponentChildren;
}) {
  return (
    <li class="tile" data-tile={props.name}>
      <span class="tile-label">{props.label}</span>
      {/* Keyed by the value: a change starts the highlight again (none under reduced motion). */}
      <span class="tile-value" key={String(props.value)}>
        {props.value}
      </span>
      {props.detail && <span class="tile-detail">{props.detail}</span>}
      {props.children}
    </li>
  );
}

const AGENT_ORDER = ['queued', 'claimed', 'running', 'completed', 'failed', 'stopped', 'killed'];
const TASK_ORDER = ['backlog', 'todo', 'in_progress', 'in_review', 'done', 'cancelled'];

/** The statuses with a count, in the order of their lifecycle (any other after them). */
function ByStatus(props: { counts: Record<string, number>; order: string[]; none: string }) {
  const known = props.order.filter((s) => props.counts[s]);
  const others = Object.keys(props.counts)
    .filter((s) => !props.order.includes(s) && props.counts[s])
    .sort();
  const statuses = [...known, ...others];
  if (statuses.length === 0) return <span class="tile-detail">{props.none}</span>;
  return (
    <ul class="tile-counts">
      {statuses.map((s) => (
        <li key={s} data-status={s}>
          {s.replace('_', ' ')} {count.format(props.counts[s]!)}
        </li>
      ))}
    </ul>
  );
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

function LiveTiles(props: { frame: StatusFrame | null; open: boolean }) {
  const { frame } = props;
  const lags = frame
    ? Object.entries(frame.projections)
        .filter(([, p]) => p.lag_events > 0)
        .sort((a, b) => b[1].lag_events - a[1].lag_events)
    : [];
  const lag = lags.reduce((n, [, p]) => n + p.lag_events, 0);
  return (
    <section aria-labelledby="live-heading">
      <h2 id="live-heading">Live status</h2>
      <p class="muted live-state">
        {!frame
          ? 'Live: connecting…'
          : `${props.open ? 'Live' : 'Reconnecting; last'} status at ${new Date(frame.at).toLocaleTimeString()}, every 2 seconds.`}
      </p>
      {frame && (
        <ul class="live-tiles" aria-label="Live status">
          <Tile
            name="health"
            label="Health"
            value={frame.service.status === 'ok' ? 'OK' : 'Degraded'}
            detail={`database ${frame.service.database === 'ok' ? 'reachable' : 'unreachable'}, version ${frame.service.version}`}
          />
          <Tile
            name="lag"
            label="Projection lag"
            value={`${count.format(lag)} ${lag === 1 ? 'event' : 'events'}`}
            detail={
              lags.length === 0
                ? 'every read model is current'
                : `behind: ${lags
                    .slice(0, 3)
                    .map(([name, p]) => `${name} ${count.format(p.lag_events)}`)
                    .join(', ')}`
            }
          />
          <Tile name="agents" label="Agents by status" value={count.format(total(frame.agents_by_status))}>
            <ByStatus counts={frame.agents_by_status} order={AGENT_ORDER} none="no agents" />
          </Tile>
          <Tile name="tasks" label="Tasks by status" value={count.format(total(frame.tasks_by_status))}>
            <ByStatus counts={frame.tasks_by_status} order={TASK_ORDER} none="no tasks" />
          </Tile>
          <Tile
            name="chat"
            label="Chat turns per minute"
            value={count.format(frame.chat_turns_per_minute)}
            detail="model replies in the last 60 seconds"
          />
        </ul>
      )}
    </section>
  );
}

/** Where a chart goes: the chart once its chunk is in, nothing before (the table beside it has the numbers). */
function ChartSlot(props: { charts: Charts | null; children: (charts: Charts) => ComponentChildren }) {
  return <div class="chart-slot">{props.charts ? props.children(props.charts) : null}</div>;
}

export function Cockpit() {
  const [summary, setSummary] = useState<Summary | null>(null);
  const [daily, setDaily] = useState<Daily | null>(null);
  const [error, setError] = useState<ApiErrorBody | null>(null);
  const [charts, setCharts] = useState<Charts | null>(null);
  const asked = useRef({ summary: 0, daily: 0 });

  async function loadSummary() {
    const seq = ++asked.current.summary;
    const { data, error: failed } = await api.GET('/api/cockpit/summary');
    if (seq !== asked.current.summary) return;
    if (data) {
      setError(null);
      setSummary(data);
    } else setError((failed as ApiErrorBody | undefined) ?? { error: 'network', message: 'no answer' });
  }
  async function loadDaily() {
    const seq = ++asked.current.daily;
    const { data } = await api.GET('/api/cockpit/cost/daily', { params: { query: { days: '30' } } });
    if (seq === asked.current.daily && data) setDaily(data);
  }
  const load = () => Promise.all([loadSummary(), loadDaily()]);
  useEffect(() => {
    void loadSummary();
  }, []);
  // Once the tiles are up (nothing before them competes with the summary): the daily cost, the
  // chart chunk and the live socket.
  const ready = summary !== null;
  useEffect(() => {
    if (!ready) return;
    void loadDaily();
    loadCharts().then(
      (m) => setCharts(() => m),
      () => setCharts(null),
    );
    return watchStatus();
  }, [ready]);

  // Read the summary again when the live counts move, and once more on the frame after (the
  // cockpit's read model may be a moment behind the counts'); not on the first frame: the load
  // above is fresh.
  const frame = liveStatus.value;
  const counts = frame ? JSON.stringify([frame.agents_by_status, frame.tasks_by_status]) : null;
  const seen = useRef<{ counts: string | null; reads: number }>({ counts: null, reads: 0 });
  useEffect(() => {
    if (counts === null) return;
    const was = seen.current;
    if (was.counts !== null && was.counts !== counts) was.reads = 2;
    was.counts = counts;
    if (was.reads > 0) {
      was.reads--;
      void load();
    }
  }, [frame?.at, counts]);

  return (
    <Page title="Cockpit">
      {error && !summary ? (
        <LoadFailed error={error} retry={handler(load)} />
      ) : !summary ? (
        <Loading />
      ) : (
        <>
          <ul class="tiles" aria-label="At a glance">
            <Tile
              label="Agents active"
              value={summary.agents.active}
              detail={`${summary.agents.configured} configured, ${summary.agents.max_concurrent} at most at once`}
            />
            <Tile label="Cost, last 30 days" value={usd.format(summary.cost.usd)} />
            <Tile label="Projects" value={summary.projects.length} />
            <Tile label="Last task created" value={when(summary.activity.last_task_created)} />
            <Tile label="Last task completed" value={when(summary.activity.last_task_completed)} />
          </ul>
          <LiveTiles frame={frame} open={liveStatusOpen.value} />
          <section aria-labelledby="tasks-heading">
            <h2 id="tasks-heading">Tasks by project</h2>
            {summary.projects.length === 0 ? (
              <p>No projects yet.</p>
            ) : (
              <>
                <ChartSlot charts={charts}>{(c) => <c.TasksChart projects={summary.projects} />}</ChartSlot>
                <div class="table-wrap">
                  <table id="tasks-table">
                    <caption class="visually-hidden">Open, in progress and done tasks of each project</caption>
                    <thead>
                      <tr>
                        <th scope="col">Project</th>
                        <th scope="col" class="num">
                          Open
                        </th>
                        <th scope="col" class="num">
                          In progress
                        </th>
                        <th scope="col" class="num">
                          Done
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {summary.projects.map((p) => (
                        <tr key={p.name}>
                          <th scope="row">{p.name}</th>
                          <td class="num">{p.tasks.open}</td>
                          <td class="num">{p.tasks.in_progress}</td>
                          <td class="num">{p.tasks.done}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </>
            )}
          </section>
          <section aria-labelledby="agents-heading">
            <h2 id="agents-heading">Agents</h2>
            <ChartSlot charts={charts}>{(c) => <c.AgentsChart agents={summary.agents} />}</ChartSlot>
            <div class="table-wrap">
              <table id="agents-table">
                <caption class="visually-hidden">Agents configured, active and at most at once</caption>
                <thead>
                  <tr>
                    <th scope="col">Configured</th>
                    <th scope="col">Active</th>
                    <th scope="col">Max concurrent</th>
                  </tr>
                </thead>
                <tbody>
                  <tr>
                    <td>{summary.agents.configured}</td>
                    <td>{summary.agents.active}</td>
                    <td>{summary.agents.max_concurrent}</td>
                  </tr>
                </tbody>
              </table>
            </div>
          </section>
          <section aria-labelledby="cost-heading">
            <h2 id="cost-heading">Cost, last 30 days</h2>
            {!daily ? (
              <p class="muted">The daily cost is not available.</p>
            ) : (
              <>
                <ChartSlot charts={charts}>{(c) => <c.CostChart daily={daily} />}</ChartSlot>
                <details class="cost-details">
                  <summary>
                    Daily cost, as a table ({usd.format(daily.series.reduce((n, d) => n + d.usd, 0))} in all)
                  </summary>
                  <div class="table-wrap">
                    <table id="cost-table">
                      <caption class="visually-hidden">Agent cost per UTC day, oldest first</caption>
                      <thead>
                        <tr>
                          <th scope="col">Day (UTC)</th>
                          <th scope="col" class="num">
                            Cost
                          </th>
                        </tr>
                      </thead>
                      <tbody>
                        {daily.series.map((d) => (
                          <tr key={d.day}>
                            <th scope="row">{d.day}</th>
                            <td class="num">{usdDay.format(d.usd)}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                </details>
              </>
            )}
          </section>
          <p class="muted">Server version {summary.version}</p>
        </>
      )}
    </Page>
  );
}
