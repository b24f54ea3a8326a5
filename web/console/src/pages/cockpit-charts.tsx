// The cockpit's charts (uPlot, on canvas), a lazy chunk: the cockpit loads this module after its
// first render, so its tiles never wait for it. Each chart is a <figure> whose canvas is hidden
// from assistive technology; its caption and legend say what it shows, and the cockpit puts a
// table with the same numbers beside it (the alternative to the graphic, also for colour).
//
// uPlot sets its elements' sizes through the CSSOM (element.style), which the CSP allows (it
// forbids <style> elements and style attributes in markup, not CSSOM writes). Colours come from
// the stylesheet's variables, read when a chart is drawn, and the charts are drawn again when the
// system switches between light and dark. Nothing animates.

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Schemas } from '../api/client.ts';
import './cockpit-charts.css';

type Summary = Schemas['CockpitSummary'];
type Daily = Schemas['CockpitDailyCost'];

interface Palette {
  fg: string;
  bg: string;
  grid: string;
  open: string;
  progress: string;
  done: string;
  bar: string;
}

function palette(): Palette {
  const style = getComputedStyle(document.documentElement);
  const v = (name: string) => style.getPropertyValue(name).trim();
  return {
    fg: v('--fg'),
    bg: v('--bg'),
    grid: v('--chart-grid'),
    open: v('--chart-open'),
    progress: v('--chart-progress'),
    done: v('--chart-done'),
    bar: v('--chart-bar'),
  };
}

/** Changes when the system switches between light and dark (so the charts are drawn again). */
function useColourScheme(): boolean {
  const query = useMemo(() => matchMedia('(prefers-color-scheme: dark)'), []);
  const [dark, setDark] = useState(query.matches);
  useEffect(() => {
    const changed = () => setDark(query.matches);
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, [query]);
  return dark;
}

const HEIGHT = 220;
const FONT = '12px system-ui, sans-serif';

/** One uPlot chart in a box that follows the width of its container. */
function Chart(props: {
  options: (width: number, colours: Palette) => uPlot.Options;
  data: uPlot.AlignedData;
  name: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const dark = useColourScheme();
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const plot = new uPlot(props.options(el.clientWidth, palette()), props.data, el);
    const resized = new ResizeObserver(() => {
      if (Math.abs(plot.width - el.clientWidth) > 1) plot.setSize({ width: el.clientWidth, height: HEIGHT });
    });
    resized.observe(el);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [props.data, props.options, dark]);
  return <div class="chart" data-chart={props.name} ref={host} aria-hidden="true" />;
}

function Legend(props: { items: { key: string; label: string }[] }) {
  return (
    <ul class="chart-legend" aria-label="Legend">
      {props.items.map((item) => (
        <li key={item.key}>
          <span class={`swatch swatch-${item.key}`} aria-hidden="true" />
          {item.label}
        </li>
      ))}
    </ul>
  );
}

const count = new Intl.NumberFormat('en');
const usdAxis = new Intl.NumberFormat('en', { style: 'currency', currency: 'USD', maximumFractionDigits: 2 });

/** Bars over categories 0..n-1, labelled below, an integer (or dollar) axis on the left. */
function categoryOptions(
  width: number,
  c: Palette,
  labels: string[],
  series: uPlot.Series[],
  money = false,
): uPlot.Options {
  const n = labels.length;
  const chars = Math.max(3, Math.floor(width / Math.max(n, 1) / 8));
  const short = labels.map((l) => (l.length > chars ? `${l.slice(0, chars - 1)}…` : l));
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { show: false },
    select: { show: false, left: 0, top: 0, width: 0, height: 0 },
    scales: {
      x: { time: false, range: [-0.5, n - 0.5] },
      y: { range: (_u, _min, max) => [0, Math.max(money ? 0.01 : 1, max) * 1.1] },
    },
    axes: [
      {
        stroke: c.fg,
        font: FONT,
        grid: { show: false },
        ticks: { show: false },
        splits: () => labels.map((_, i) => i),
        values: (_u, splits) => splits.map((i) => short[i] ?? ''),
      },
      {
        stroke: c.fg,
        font: FONT,
        grid: { stroke: c.grid, width: 1 },
        ticks: { stroke: c.grid, width: 1 },
        incrs: money ? undefined : [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000],
        values: (_u, splits) => splits.map((v) => (money ? usdAxis.format(v) : count.format(v))),
      },
    ],
    series: [{}, ...series],
  };
}

const bars = uPlot.paths.bars!({ size: [0.6, 72] });
/** A bar series; a stacked one is outlined in the background colour, so its segments stay apart. */
const bar = (label: string, fill: string, outline?: string): uPlot.Series => ({
  label,
  fill,
  stroke: outline ?? fill,
  width: outline ? 1 : 0,
  paths: bars,
  points: { show: false },
});

/** Each project's tasks as one bar, stacked: open at the bottom, then in progress, then done. */
export function TasksChart(props: { projects: Summary['projects'] }) {
  const data = useMemo<uPlot.AlignedData>(() => {
    const p = props.projects;
    // Each series is drawn from 0, the tallest first: a bar to the total (done on top), over it
    // one to open + in progress, over that one to open.
    return [
      p.map((_, i) => i),
      p.map((x) => x.tasks.open + x.tasks.in_progress + x.tasks.done),
      p.map((x) => x.tasks.open + x.tasks.in_progress),
      p.map((x) => x.tasks.open),
    ];
  }, [props.projects]);
  const names = useMemo(() => props.projects.map((p) => p.name), [props.projects]);
  const options = useMemo(
    () => (width: number, c: Palette) =>
      categoryOptions(width, c, names, [
        bar('Done', c.done, c.bg),
        bar('In progress', c.progress, c.bg),
        bar('Open', c.open, c.bg),
      ]),
    [names],
  );
  return (
    <figure class="chart-figure">
      <Chart name="tasks" options={options} data={data} />
      <figcaption>
        Tasks of each project, stacked: open, in progress and done. The table below has the same numbers.
      </figcaption>
      <Legend
        items={[
          { key: 'open', label: 'Open' },
          { key: 'progress', label: 'In progress' },
          { key: 'done', label: 'Done' },
        ]}
      />
    </figure>
  );
}

const AGENT_LABELS = ['Configured', 'Active', 'Max concurrent'];

/** Agents configured, active and the most that may run at once, as three bars. */
export function AgentsChart(props: { agents: Summary['agents'] }) {
  const { configured, active, max_concurrent } = props.agents;
  const data = useMemo<uPlot.AlignedData>(
    () => [
      [0, 1, 2],
      [configured, active, max_concurrent],
    ],
    [configured, active, max_concurrent],
  );
  const options = useMemo(
    () => (width: number, c: Palette) => categoryOptions(width, c, AGENT_LABELS, [bar('Agents', c.bar)]),
    [],
  );
  return (
    <figure class="chart-figure">
      <Chart name="agents" options={options} data={data} />
      <figcaption>
        Agents configured, active, and the most that may run at once. The table below has the same numbers.
      </figcaption>
    </figure>
  );
}

const DAY_S = 86_400;

/** Cost per UTC day, oldest on the left. */
export function CostChart(props: { daily: Daily }) {
  const data = useMemo<uPlot.AlignedData>(
    () => [
      props.daily.series.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000),
      props.daily.series.map((d) => d.usd),
    ],
    [props.daily],
  );
  const options = useMemo(
    () =>
      (width: number, c: Palette): uPlot.Options => ({
        width,
        height: HEIGHT,
        legend: { show: false },
        cursor: { show: false },
        select: { show: false, left: 0, top: 0, width: 0, height: 0 },
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: {
          x: { time: true, range: (_u, min, max) => [min - DAY_S / 2, max + DAY_S / 2] },
          y: { range: (_u, _min, max) => [0, Math.max(0.01, max) * 1.1] },
        },
        axes: [
          { stroke: c.fg, font: FONT, grid: { show: false }, ticks: { stroke: c.grid, width: 1 }, space: 60 },
          {
            stroke: c.fg,
            font: FONT,
            grid: { stroke: c.grid, width: 1 },
            ticks: { stroke: c.grid, width: 1 },
            size: 70,
            values: (_u, splits) => splits.map((v) => usdAxis.format(v)),
          },
        ],
        series: [{}, bar('Cost', c.bar)],
      }),
    [],
  );
  return (
    <figure class="chart-figure">
      <Chart name="cost" options={options} data={data} />
      <figcaption>
        Agent cost per UTC day over the last {props.daily.days} days, oldest on the left. The table “Daily cost” below
        has the same numbers.
      </figcaption>
    </figure>
  );
}
