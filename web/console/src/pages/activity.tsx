// Activity (/activity, every account): the /ws feed as it happens, through the console's one /ws
// socket (live.ts), newest first, filtered by the server to what this account may see. The page
// starts from the moment it opens (the log's history is the API's) and keeps the last LIMIT
// events; older ones drop off the end, and the page says how many.
//
// - Filters: the event type (a select of the types seen so far) and the stream (any part of its
//   name, e.g. `orch.task-` or an id). They apply to what is kept, so changing one shows past events.
// - Pause keeps collecting: the list on screen stays still and a line counts what arrived; Resume
//   shows it all (within the last LIMIT events). Dropping while paused would make Resume lie
//   about what happened.
// - After a drop, live.ts reconnects with `?from=` the last position received, so the events of
//   the gap arrive once each, in order.
// - Event data is rendered as text (JSON), never as HTML.

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { connected, listen, type LogEvent } from '../live.ts';
import { Page } from '../page.tsx';
import { Field } from '../ui/field.tsx';
import { announce } from '../ui/toast.tsx';
import './activity.css';

export const LIMIT = 500;
const DATA_CHARS = 200;
const count = new Intl.NumberFormat('en');

const dataText = (data: LogEvent['data']) => {
  const text = JSON.stringify(data);
  return text.length > DATA_CHARS ? `${text.slice(0, DATA_CHARS - 1)}…` : text;
};
const plural = (n: number, one: string, many = `${one}s`) => `${count.format(n)} ${n === 1 ? one : many}`;

export function Activity() {
  // Every event kept (oldest first, at most LIMIT), and what the screen shows (the same, unless paused).
  const kept = useRef<LogEvent[]>([]);
  const [shown, setShown] = useState<LogEvent[]>([]);
  const [dropped, setDropped] = useState(0);
  const paused = useRef(false);
  const [isPaused, setPaused] = useState(false);
  const [waiting, setWaiting] = useState(0);
  const [type, setType] = useState('');
  const [stream, setStream] = useState('');

  useEffect(
    () =>
      listen((event) => {
        const list = kept.current;
        list.push(event);
        if (list.length > LIMIT) {
          list.splice(0, list.length - LIMIT);
          setDropped((n) => n + 1);
        }
        if (paused.current) setWaiting((n) => n + 1);
        else setShown(list.slice());
      }),
    [],
  );

  function togglePause() {
    if (paused.current) {
      paused.current = false;
      setPaused(false);
      setShown(kept.current.slice());
      announce(`Resumed: ${plural(waiting, 'event')} added.`);
      setWaiting(0);
    } else {
      paused.current = true;
      setPaused(true);
      announce('Paused. New events are kept and shown when you resume.');
    }
  }

  const types = useMemo(
    () => [...new Set([...shown.map((e) => e.type), ...(type ? [type] : [])])].sort(),
    [shown, type],
  );
  const needle = stream.trim().toLowerCase();
  const visible = useMemo(
    () =>
      shown.filter((e) => (!type || e.type === type) && (!needle || e.stream.toLowerCase().includes(needle))).reverse(),
    [shown, type, needle],
  );
  const filtered = type !== '' || needle !== '';

  return (
    <Page
      title="Activity"
      actions={<p class="live-state muted">{connected.value ? 'Live: up to date' : 'Live: connecting…'}</p>}
    >
      <div class="activity-controls">
        <Field
          id="activity-type"
          label="Type"
          kind="select"
          value={type}
          onInput={setType}
          options={[{ value: '', label: 'All types' }, ...types.map((t) => ({ value: t, label: t }))]}
        />
        <Field
          id="activity-stream"
          label="Stream"
          type="search"
          value={stream}
          onInput={setStream}
          hint="Any part of a stream's name, such as orch.task- or an id."
        />
        <button type="button" class={isPaused ? '' : 'secondary'} onClick={togglePause}>
          {isPaused ? 'Resume' : 'Pause'}
        </button>
      </div>
      {isPaused && (
        <p class="panel" id="activity-paused">
          Paused: {plural(waiting, 'new event')} since, kept until you resume
          {waiting > LIMIT ? ` (only the last ${count.format(LIMIT)} are kept)` : ''}.
        </p>
      )}
      <p class="muted" id="activity-count">
        {filtered
          ? `${plural(visible.length, 'event')} of ${count.format(shown.length)} match the filters`
          : `${plural(shown.length, 'event')}`}{' '}
        since this page opened, newest first. The page keeps the last {count.format(LIMIT)}
        {dropped > 0 ? `; ${plural(dropped, 'older event')} dropped off the end` : ''}.
      </p>
      {visible.length === 0 ? (
        <p>{shown.length === 0 ? 'No events yet. They appear here as they happen.' : 'No events match the filters.'}</p>
      ) : (
        <div class="table-wrap">
          <table id="activity-table">
            <caption class="visually-hidden">Events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Type</th>
                <th scope="col">Stream</th>
                <th scope="col">Data</th>
                <th scope="col">Position</th>
              </tr>
            </thead>
            <tbody>
              {visible.map((e) => (
                <tr key={e.position} data-position={e.position}>
                  <td class="nowrap">{new Date(e.at).toLocaleTimeString()}</td>
                  <td class="event-type">{e.type}</td>
                  <td class="event-stream">{e.stream}</td>
                  <td class="event-data">
                    <code>{dataText(e.data)}</code>
                  </td>
                  <td class="nowrap muted">{e.position}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
