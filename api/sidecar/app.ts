// The updater sidecar's HTTP API (spec 1 "Updates": internal network only). Every route but
// `GET /health` needs a request signed with the shared token (crypto/request-signature.ts):
// `X-Orchard-Timestamp` within ±300 s, `X-Orchard-Nonce` (128 bits, remembered for the window)
// and `X-Orchard-Signature`, compared in constant time; a refusal is 401 `signature_invalid`,
// `timestamp_skew` or `nonce_replayed`. Every answer is signed too, bound to the request's nonce.

import { Hono, type Context } from 'hono';
import { NONCE_PATTERN, signatureMatches, signRequest, signResponse } from '../../crypto/request-signature.ts';
import { phaseOf } from '../../domain/updates/apply.ts';
import type { Manifest } from '../../domain/updates/manifest.ts';
import type { Clock } from '../../infra/clock.ts';
import type { ApplyExecutor } from '../../infra/updater/executor.ts';
import type { Journal } from '../../infra/updater/journal.ts';
import type { ReleaseRuntime } from '../../infra/updater/runtime.ts';
import { isUuid } from '../shared/params.ts';

export const SKEW_SECS = 300;
const MAX_BODY_BYTES = 256 * 1024;

export interface SidecarDeps {
  token: Uint8Array;
  clock: Clock;
  executor: ApplyExecutor;
  journal: Journal;
  runtime: ReleaseRuntime;
  version: string;
}

/** Nonces seen within the window; forgotten once their timestamp leaves it. */
export class NonceMemory {
  private readonly seen = new Map<string, number>();

  /** False when the nonce was seen already. */
  remember(nonce: string, nowSecs: number): boolean {
    for (const [n, at] of this.seen) if (at < nowSecs - 2 * SKEW_SECS) this.seen.delete(n);
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, nowSecs);
    return true;
  }
}

type Env = { Variables: { nonce: string } };

export function createSidecarApp(deps: SidecarDeps) {
  const app = new Hono<Env>();
  const nonces = new NonceMemory();
  const nowSecs = () => Math.floor(deps.clock.now().getTime() / 1000);

  // Sign every answer (the unauthenticated /health too: a client can tell it is ours).
  app.use('*', async (c, next) => {
    await next();
    const body = await c.res.clone().text();
    const timestamp = String(nowSecs());
    const headers = new Headers(c.res.headers);
    headers.set('x-orchard-timestamp', timestamp);
    headers.set(
      'x-orchard-signature',
      signResponse(deps.token, {
        status: c.res.status,
        requestNonce: c.get('nonce') ?? c.req.header('x-orchard-nonce') ?? '',
        timestamp,
        body,
      }),
    );
    c.res = new Response(body, { status: c.res.status, headers });
  });

  app.get('/health', (c) =>
    c.json({
      status: 'ok',
      version: deps.version,
      runtime: deps.runtime.name,
      apply_in_progress: deps.executor.current,
    }),
  );

  const refuse = (c: Context<Env>, code: string, message: string) => c.json({ error: code, message }, 401);

  app.use('/v1/*', async (c, next) => {
    const timestamp = c.req.header('x-orchard-timestamp') ?? '';
    const nonce = c.req.header('x-orchard-nonce') ?? '';
    const presented = c.req.header('x-orchard-signature');
    const raw = new Uint8Array(await c.req.arrayBuffer());
    if (raw.length > MAX_BODY_BYTES) return c.json({ error: 'payload_too_large', message: 'body too large' }, 413);
    const url = new URL(c.req.url);
    const expected = signRequest(deps.token, {
      method: c.req.method,
      pathAndQuery: url.pathname + url.search,
      timestamp,
      nonce,
      body: raw,
    });
    if (!signatureMatches(expected, presented))
      return refuse(c, 'signature_invalid', 'the request signature does not verify');
    if (!/^\d{1,12}$/.test(timestamp) || Math.abs(Number(timestamp) - nowSecs()) > SKEW_SECS)
      return refuse(c, 'timestamp_skew', `the timestamp is more than ${SKEW_SECS} s away`);
    if (!NONCE_PATTERN.test(nonce))
      return refuse(c, 'signature_invalid', 'the nonce must be 32 lowercase hex characters');
    if (!nonces.remember(nonce, nowSecs())) return refuse(c, 'nonce_replayed', 'this nonce was used already');
    c.set('nonce', nonce);
    c.set('body' as never, raw as never);
    await next();
  });

  const bodyOf = (c: Context<Env>): unknown => {
    const raw = c.get('body' as never) as Uint8Array;
    try {
      return raw.length ? JSON.parse(new TextDecoder().decode(raw)) : null;
    } catch {
      return undefined;
    }
  };

  app.post('/v1/apply', async (c) => {
    const b = bodyOf(c) as Record<string, unknown> | null | undefined;
    if (
      !b ||
      typeof b !== 'object' ||
      typeof b.apply_id !== 'string' ||
      !isUuid(b.apply_id) ||
      !b.manifest ||
      typeof b.manifest !== 'object' ||
      typeof b.requested_by !== 'string' ||
      typeof b.source !== 'string'
    ) {
      return c.json(
        {
          error: 'validation_failed',
          message: 'body: {apply_id (uuid), manifest (DSSE envelope), requested_by, source}',
        },
        400,
      );
    }
    const result = await deps.executor.begin({
      apply_id: b.apply_id.toLowerCase(),
      manifest: b.manifest,
      requested_by: b.requested_by,
      source: b.source,
    });
    return c.json(result.body, result.status);
  });

  app.get('/v1/apply/:id', (c) => {
    const view = deps.executor.view(c.req.param('id').toLowerCase());
    if (!view) return c.json({ error: 'apply_not_found', message: 'no such apply' }, 404);
    return c.json({ id: view.apply_id, ...view });
  });

  app.get('/v1/apply/:id/events', (c) => {
    const id = c.req.param('id').toLowerCase();
    const entries = deps.journal.of(id);
    if (!entries.length) return c.json({ error: 'apply_not_found', message: 'no such apply' }, 404);
    const after = Number(c.req.query('after') ?? 0) || 0;
    const events = entries
      .filter((e) => e.seq > after)
      .map((e) => {
        // The envelope stays in the journal; the events show the steps.
        const { manifest: _manifest, ...data } = e.data;
        return { seq: e.seq, id: e.id, type: e.type, state: e.state, phase: phaseOf(e.state), at: e.at, data };
      });
    return c.json({ apply_id: id, events });
  });

  app.get('/v1/delivery', async (c) => {
    const release = lastRelease(deps.journal);
    const version = await deps.runtime.currentVersion();
    const items = release && release.version === version ? await deps.runtime.delivery(release.requirements) : [];
    const requirements = items.map(({ id, kind, target, status, action }) => ({ id, kind, target, status, action }));
    return c.json({
      version,
      apply_id: release?.apply_id ?? null,
      checked_at: deps.clock.now().toISOString(),
      status: requirements.every((r) => r.status === 'present') ? 'complete' : 'incomplete',
      requirements,
    });
  });

  app.get('/v1/status', async (c) =>
    c.json({
      version: await deps.runtime.currentVersion(),
      runtime: deps.runtime.name,
      apply_in_progress: deps.executor.current,
      frozen: deps.journal.frozen(),
    }),
  );

  app.post('/v1/apply/:id/unfreeze', async (c) => {
    const b = bodyOf(c) as { operator?: unknown } | null | undefined;
    const result = await deps.executor.unfreeze(
      c.req.param('id').toLowerCase(),
      typeof b?.operator === 'string' ? b.operator.slice(0, 200) : 'operator',
    );
    return c.json(result.body, result.status);
  });

  app.notFound((c) => c.json({ error: 'not_found', message: 'no such route' }, 404));
  app.onError((error, c) => c.json({ error: 'internal', message: error.message }, 500));
  return app;
}

/** The manifest of the release that runs now: the last succeeded apply's (its requirements are what delivery checks). */
function lastRelease(
  journal: Journal,
): { apply_id: string; version: string; requirements: Manifest['requirements'] } | null {
  for (const entries of journal.applies().reverse()) {
    if (entries.at(-1)!.state !== 'succeeded') continue;
    const envelope = entries[0]!.data.manifest as { payload?: string };
    try {
      const payload = JSON.parse(Buffer.from(String(envelope.payload), 'base64').toString('utf8')) as Manifest;
      return { apply_id: entries[0]!.apply_id, version: payload.version, requirements: payload.requirements ?? [] };
    } catch {
      return null;
    }
  }
  return null;
}
