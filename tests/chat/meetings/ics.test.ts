// Meetings as iCalendar through real HTTP: every .ics parses with ical.js, and ical.js's own
// expansion (RRULE, EXDATE, RECURRENCE-ID overrides, VTIMEZONE) equals the server's occurrences
// over two years in four zones; UID, SEQUENCE, STATUS:CANCELLED and VALARMs; who may fetch. Feed
// tokens: shown once (only a hash in the log and the read model), listed without the token,
// fetched with no JWT, revoked, and re-checked against memberships on every fetch.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import ICAL from 'ical.js';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { startChannelWorld, stopChannelWorld, type World } from '../../support/channel-world.ts';
import { http, logText } from '../../support/services.ts';
import { Spaces } from '../../support/spaces.ts';

// Each test makes its own channels in the group.
type Ctx = World<'member', false>;
const test = suite<Ctx>('chat meetings: iCalendar and feeds');
test.before(async (ctx) => {
  Object.assign(ctx, await startChannelWorld('chat_meetings_ics', { channel: false }));
});
test.after((ctx) => stopChannelWorld(ctx));

const FROM = '2027-01-01T00:00:00Z';
const MID = '2027-12-31T00:00:00Z';
const TO = '2028-12-30T00:00:00Z';

/** ical.js's expansion of every live (not cancelled) series in the document: `<uid>|<start UTC>` in [from, to). */
function expandWithIcalJs(text: string, from: string, to: string): string[] {
  const root = new ICAL.Component(ICAL.parse(text));
  for (const tz of root.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(tz);
  const events = root.getAllSubcomponents('vevent');
  const out: string[] = [];
  const [fromMs, toMs] = [Date.parse(from), Date.parse(to)];
  for (const master of events.filter((e) => !e.hasProperty('recurrence-id'))) {
    if (master.getFirstPropertyValue('status') === 'CANCELLED') continue;
    const uid = master.getFirstPropertyValue('uid') as string;
    const event = new ICAL.Event(master);
    for (const ex of events.filter((e) => e.hasProperty('recurrence-id') && e.getFirstPropertyValue('uid') === uid))
      event.relateException(new ICAL.Event(ex));
    if (!event.isRecurring()) {
      const ms = event.startDate.toJSDate().getTime();
      if (ms >= fromMs && ms < toMs) out.push(`${uid}|${new Date(ms).toISOString()}`);
      continue;
    }
    const it = event.iterator();
    // Overrides may move an occurrence: expand the originals a little wider, keep actual starts in range.
    for (let next = it.next(); next; next = it.next()) {
      const original = next.toJSDate().getTime();
      if (original >= toMs + 40 * 86_400_000) break;
      const start = event.getOccurrenceDetails(next).startDate.toJSDate().getTime();
      if (start >= fromMs && start < toMs) out.push(`${uid}|${new Date(start).toISOString()}`);
    }
  }
  return out.sort();
}

async function serverOccurrences(sp: Spaces, by: ChatAccount, chid: string): Promise<string[]> {
  const all = [];
  for (const [from, to] of [
    [FROM, MID],
    [MID, TO],
  ])
    all.push(...(await sp.ok(by, 'GET', `/api/channels/${chid}/meetings?from=${from}&to=${to}`)).occurrences);
  return all
    .filter((o: any) => !o.cancelled)
    .map((o: any) => `${o.meeting_id}@chatsvc|${new Date(o.start).toISOString()}`)
    .sort();
}

const getIcs = (sp: Spaces, by: ChatAccount | null, path: string) =>
  http(`${sp.base}${path}`, { headers: by ? { authorization: `Bearer ${by.access}` } : {} });

for (const zone of ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney']) {
  test(`ical.js's expansion equals the server's over two years: ${zone}`, async ({ sp, owner, ann, bob, gid }) => {
    const chid = await sp.channel(owner, gid, [ann, bob], zone.replace('/', '-').toLowerCase());
    const make = (body: Record<string, unknown>) =>
      sp.ok(ann, 'POST', `/api/channels/${chid}/meetings`, { time_zone: zone, ...body }, 201);
    const weekly = await make({
      title: 'Weekly',
      start: '2027-01-04T09:00',
      rrule: 'FREQ=WEEKLY;BYDAY=MO',
      reminders: [10, 60],
    });
    // 02:30 falls in the spring-forward gap in zones with DST (RFC 5545: the offset before the gap).
    const daily = await make({
      title: 'Daily',
      start: '2027-01-01T02:30',
      rrule: 'FREQ=DAILY;INTERVAL=3',
      duration_minutes: 15,
    });
    await make({ title: 'Monthly', start: '2027-01-31T18:00', rrule: 'FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=20' });
    await make({ title: 'Yearly', start: '2027-06-15T12:00', rrule: 'FREQ=YEARLY' });
    await make({ title: 'Until', start: '2027-02-02T08:15', rrule: 'FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20270601T000000Z' });
    await make({ title: 'Once', start: '2027-09-09T09:09', location: 'Hall; A, B' });
    const gone = await make({ title: 'Gone', start: '2027-03-01T10:00', rrule: 'FREQ=DAILY' });
    await sp.ok(ann, 'DELETE', `/api/meetings/${gone.id}`, undefined, 204);
    // Exceptions: a cancelled occurrence, a moved one (also across a DST change), a renamed one.
    const occ = (
      await sp.ok(ann, 'GET', `/api/channels/${chid}/meetings?from=2027-03-01T00:00:00Z&to=2027-04-30T00:00:00Z`)
    ).occurrences.filter((o: any) => o.meeting_id === weekly.id);
    await sp.ok(ann, 'DELETE', `/api/meetings/${weekly.id}/occurrences/${occ[0].occurrence_id}`, undefined, 204);
    await sp.ok(ann, 'PATCH', `/api/meetings/${weekly.id}`, {
      scope: 'occurrence',
      occurrence_id: occ[1].occurrence_id,
      start: occ[1].start_local.replace(/T.*/, 'T16:30'),
      title: 'Later',
    });
    await sp.ok(ann, 'PATCH', `/api/meetings/${weekly.id}`, {
      scope: 'occurrence',
      occurrence_id: occ[3].occurrence_id,
      start: '2027-04-05T07:00',
    });
    const dOcc = (
      await sp.ok(ann, 'GET', `/api/channels/${chid}/meetings?from=2027-06-01T00:00:00Z&to=2027-06-10T00:00:00Z`)
    ).occurrences.find((o: any) => o.meeting_id === daily.id);
    await sp.ok(ann, 'PATCH', `/api/meetings/${daily.id}`, {
      scope: 'occurrence',
      occurrence_id: dOcc.occurrence_id,
      title: 'Renamed',
      duration_minutes: 50,
    });

    const r = await getIcs(sp, bob, `/api/channels/${chid}/meetings.ics`);
    assert.is(r.status, 200, r.text);
    assert.match(r.headers.get('content-type') ?? '', /^text\/calendar/);
    const text = r.text;
    const server = await serverOccurrences(sp, bob, chid);
    assert.ok(server.length > 300, `${server.length} occurrences`);
    const theirs = expandWithIcalJs(text, FROM, TO);
    const diff = [
      ...theirs.filter((x) => !server.includes(x)).map((x) => `ical.js only ${x}`),
      ...server.filter((x) => !theirs.includes(x)).map((x) => `server only ${x}`),
    ];
    assert.equal(diff, []);
    assert.equal(theirs, server);

    // The document's parts.
    const root = new ICAL.Component(ICAL.parse(text));
    assert.ok(
      root.getAllSubcomponents('vtimezone').some((tz) => tz.getFirstPropertyValue('tzid') === zone),
      'VTIMEZONE',
    );
    const vevents = root.getAllSubcomponents('vevent');
    const master = vevents.find(
      (e) => e.getFirstPropertyValue('uid') === `${weekly.id}@chatsvc` && !e.hasProperty('recurrence-id'),
    )!;
    assert.is(master.getFirstPropertyValue('sequence'), 3);
    assert.is(String(master.getFirstPropertyValue('rrule')), 'FREQ=WEEKLY;BYDAY=MO');
    assert.is(master.getAllProperties('exdate').length, 1);
    assert.is(master.getFirstProperty('dtstart')!.getParameter('tzid'), zone);
    assert.equal(
      master
        .getAllSubcomponents('valarm')
        .map((a) => String(a.getFirstPropertyValue('trigger')))
        .sort(),
      ['-PT10M', '-PT1H'].sort(),
    );
    assert.is(
      vevents.filter((e) => e.getFirstPropertyValue('uid') === `${weekly.id}@chatsvc` && e.hasProperty('recurrence-id'))
        .length,
      2,
    );
    const cancelled = vevents.find((e) => e.getFirstPropertyValue('uid') === `${gone.id}@chatsvc`)!;
    assert.is(cancelled.getFirstPropertyValue('status'), 'CANCELLED');
    assert.is(
      vevents.find((e) => e.getFirstPropertyValue('summary') === 'Once')!.getFirstPropertyValue('location'),
      'Hall; A, B',
    );

    // One meeting's .ics: members only.
    const one = await getIcs(sp, bob, `/api/meetings/${weekly.id}.ics`);
    assert.is(one.status, 200);
    assert.equal(
      expandWithIcalJs(one.text, FROM, TO),
      server.filter((x) => x.startsWith(weekly.id)),
    );
  });
}

test('.ics authorisation: signed in (401), members (403), unknown (404)', async ({ sp, owner, ann, out, gid }) => {
  const chid = await sp.channel(owner, gid, [ann], 'ics-auth');
  const m = await sp.ok(
    ann,
    'POST',
    `/api/channels/${chid}/meetings`,
    { title: 'T', start: '2027-01-04T09:00', time_zone: 'UTC' },
    201,
  );
  assert.is((await getIcs(sp, null, `/api/meetings/${m.id}.ics`)).status, 401);
  assert.is((await getIcs(sp, null, `/api/channels/${chid}/meetings.ics`)).status, 401);
  expectError(await getIcs(sp, out, `/api/meetings/${m.id}.ics`), 403);
  expectError(await getIcs(sp, out, `/api/channels/${chid}/meetings.ics`), 403);
  expectError(await getIcs(sp, ann, `/api/meetings/00000000-0000-4000-8000-000000000000.ics`), 404);
  const r = await getIcs(sp, ann, `/api/meetings/${m.id}.ics`);
  assert.is(r.status, 200);
  const ev = new ICAL.Component(ICAL.parse(r.text)).getFirstSubcomponent('vevent')!;
  assert.is(new ICAL.Event(ev).startDate.toJSDate().toISOString(), '2027-01-04T09:00:00.000Z');
});

test('feed tokens: shown once, hashed, listed without the token, no JWT to fetch, revocable, memberships re-checked', async ({
  s,
  sp,
  owner,
  ann,
  bob,
  out,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob], 'feeds');
  const other = await sp.channel(owner, gid, [ann], 'feeds-2');
  const feedMeeting = await sp.ok(
    ann,
    'POST',
    `/api/channels/${chid}/meetings`,
    { title: 'In feeds', start: '2027-01-04T09:00', time_zone: 'Europe/Berlin', rrule: 'FREQ=WEEKLY' },
    201,
  );
  await sp.ok(
    ann,
    'POST',
    `/api/channels/${other}/meetings`,
    { title: 'Other', start: '2027-01-05T09:00', time_zone: 'UTC' },
    201,
  );
  expectError(await sp.call(null, 'POST', '/api/calendar/feed-tokens', {}), 401);
  expectError(await sp.call(out, 'POST', '/api/calendar/feed-tokens', { channel_id: chid }), 403);
  expectError(await sp.call(bob, 'POST', '/api/calendar/feed-tokens', { extra: 1 }), 400);
  const all = await sp.ok(bob, 'POST', '/api/calendar/feed-tokens', { label: 'phone' }, 201);
  const one = await sp.ok(bob, 'POST', '/api/calendar/feed-tokens', { channel_id: chid }, 201);
  assert.match(all.token, /^calf_[A-Za-z0-9_-]{43}$/);
  assert.is(all.url, `/api/calendar/feeds/${all.token}.ics`);
  // Only the hash is kept: not in the log, not in the read model.
  for (const t of [all.token, one.token]) {
    const hits = await s.platform.pool.query(
      `SELECT count(*)::int AS n FROM events WHERE data::text LIKE $1 OR metadata::text LIKE $1`,
      [`%${t.slice(5)}%`],
    );
    assert.is(hits.rows[0].n, 0);
    const rm = await s.platform.pool.query(
      `SELECT count(*)::int AS n FROM chat_calendar_feed_tokens WHERE token_hash = $1 OR label = $1`,
      [t],
    );
    assert.is(rm.rows[0].n, 0);
  }
  const listed = await sp.ok(bob, 'GET', '/api/calendar/feed-tokens');
  assert.equal(
    listed.feed_tokens.map((t: any) => [t.id, t.channel_id, t.label]),
    [
      [all.id, null, 'phone'],
      [one.id, chid, null],
    ],
  );
  assert.ok(!JSON.stringify(listed).includes(all.token));
  assert.equal((await sp.ok(ann, 'GET', '/api/calendar/feed-tokens')).feed_tokens, []);

  const feed = (url: string) => http(`${sp.base}${url}`);
  let r = await feed(all.url);
  assert.is(r.status, 200, r.text);
  assert.match(r.text, /SUMMARY:In feeds/);
  assert.not.match(r.text, /SUMMARY:Other/, 'bob is not in the other channel');
  const inFeeds = expandWithIcalJs(r.text, FROM, MID).filter((x) => x.startsWith(`${feedMeeting.id}@`));
  assert.is(inFeeds.length, 52);
  assert.is((await feed(one.url)).status, 200);
  expectError(await feed('/api/calendar/feeds/calf_nope.ics'), 404);
  // Bob leaves the channel: both feeds stop showing it (the channel feed is 404).
  await sp.ok(bob, 'POST', `/api/channels/${chid}/leave`, undefined, 204);
  r = await feed(all.url);
  assert.is(r.status, 200);
  assert.not.match(r.text, /SUMMARY:In feeds/);
  expectError(await feed(one.url), 404);
  // Revoke: another's is 404; own 204, then its URL is 404 and a second revoke 404.
  expectError(await sp.call(ann, 'DELETE', `/api/calendar/feed-tokens/${all.id}`), 404);
  await sp.ok(bob, 'DELETE', `/api/calendar/feed-tokens/${all.id}`, undefined, 204);
  expectError(await feed(all.url), 404);
  expectError(await sp.call(bob, 'DELETE', `/api/calendar/feed-tokens/${all.id}`), 404);
  assert.equal(
    (await sp.ok(bob, 'GET', '/api/calendar/feed-tokens')).feed_tokens.map((t: any) => t.id),
    [one.id],
  );
  // A suspended owner's feeds are 404 until the suspension ends (the owner, first account, is the instance admin).
  const annFeed = await sp.ok(ann, 'POST', '/api/calendar/feed-tokens', {}, 201);
  assert.is((await feed(annFeed.url)).status, 200);
  await sp.ok(owner, 'POST', `/api/admin/users/${ann.id}/suspend`, { reason: 'test' });
  expectError(await feed(annFeed.url), 404);
  await sp.ok(owner, 'POST', `/api/admin/users/${ann.id}/unsuspend`);
  assert.is((await feed(annFeed.url)).status, 200);
  // The URL is the credential: never in a log line.
  const lines = s.logLines.join('\n');
  const events = await logText(s);
  assert.ok(lines.includes('/api/calendar/feeds/[redacted]'), 'feed fetches are logged, redacted');
  for (const t of [all.token, one.token])
    assert.not.ok(lines.includes(t.slice(5)) || events.includes(t.slice(5)), 'a token in a log line or the event log');
});

test.run();
