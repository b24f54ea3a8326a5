// TLS of the connector, with the chat service behind a TLS terminator whose certificate comes
// from a test CA: without the CA bundle, connect fails with the TLS hint; `verify_tls: false`
// makes that integration's REST work while its socket is still refused; with
// ORCH_CHATSVC_CA_BUNDLE both work; a certificate for another host name is refused;
// per-integration settings stay apart.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startAgentApps } from '../../support/agents.ts';
import { BOOTSTRAP_SECRET, INTEGRATION_KEY, provisionToken, socketUp, uniqueBotName } from '../../support/chatsvc.ts';
import { http, type TestServices } from '../../support/services.ts';
import { makeCa, tlsTerminator, type Terminator } from '../../support/tls.ts';
import { until } from '../../support/until.ts';

interface Ctx {
  s: TestServices;
  admin: Record<string, string>;
  good: Terminator;
  wrong: Terminator;
  caFile: string;
  profiles: string[];
}
const test = suite<Ctx>('chatsvc: TLS');

test.before(async (ctx) => {
  const { s, keys } = await startAgentApps(
    'chatsvc_tls',
    { ORCH_INTEGRATION_ENCRYPTION_KEY: INTEGRATION_KEY, CHATSVC_BOOTSTRAP_SECRET: BOOTSTRAP_SECRET },
    { sockets: true },
  );
  ctx.s = s;
  ctx.admin = { 'X-API-Key': keys.adminKey };
  const ca = await makeCa();
  ctx.good = await tlsTerminator(s.chat, await ca.issue(['localhost']));
  ctx.wrong = await tlsTerminator(s.chat, await ca.issue(['chat.other.test']));
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-tls-'));
  ctx.caFile = path.join(dir, 'ca.pem');
  await writeFile(ctx.caFile, ca.pem);
  ctx.profiles = [];
  for (const slug of ['tls-a', 'tls-b', 'tls-c', 'tls-d']) {
    const r = await http(`${s.orch}/api/v1/agent-chat/profiles`, { headers: ctx.admin, json: { slug, name: slug } });
    ctx.profiles.push(r.body.id);
  }
});
test.after(async ({ s, good, wrong }) => {
  await good?.close();
  await wrong?.close();
  await s?.close();
});

const connect = async (ctx: Ctx, profile: string, port: number, verifyTls: boolean) =>
  http(`${ctx.s.orch}/api/v1/agents/${profile}/chatsvc/connect`, {
    headers: ctx.admin,
    json: {
      instance_url: `https://localhost:${port}`,
      provision_token: await provisionToken(ctx.s),
      bot_username: uniqueBotName(),
      display_name: 'TLS Bot',
      verify_tls: verifyTls,
    },
  });
const base = (ctx: Ctx, profile: string) => `${ctx.s.orch}/api/v1/agents/${profile}/chatsvc`;

test('no CA bundle: 502 chatsvc_mint_bot_failed naming the TLS error and the two ways out', async (ctx) => {
  const r = await connect(ctx, ctx.profiles[0]!, ctx.good.port, true);
  assert.is(r.status, 502, r.text);
  assert.is(r.body.error, 'chatsvc_mint_bot_failed');
  assert.match(r.body.detail, /TLS error/);
  assert.match(r.body.detail, /verify_tls: false/);
  assert.match(r.body.detail, /ORCH_CHATSVC_CA_BUNDLE/);
});

test("verify_tls false: that integration's REST works; its socket still verifies and is refused; others still verify", async (ctx) => {
  const r = await connect(ctx, ctx.profiles[1]!, ctx.good.port, false);
  assert.is(r.status, 201, r.text);
  assert.is(r.body.verify_tls, false);
  let socket: Record<string, any> = {};
  await until(
    () => `the socket refused (last: ${JSON.stringify(socket)})`,
    async () => {
      socket = (await http(base(ctx, ctx.profiles[1]!), { headers: ctx.admin })).body.socket;
      return socket.state === 'disconnected' && socket.last_error;
    },
    15_000,
    100,
  );
  assert.match(socket.last_error, /certificate|self.signed|issuer/i);
  assert.ok(
    ctx.s.logLines.some((l) => l.includes('chatsvc_tls_verification_off')),
    'logged',
  );
  // Per integration: the same instance, verify_tls true, is still refused.
  assert.is((await connect(ctx, ctx.profiles[0]!, ctx.good.port, true)).status, 502);
  const test = await http(`${base(ctx, ctx.profiles[1]!)}/test`, { method: 'POST', headers: ctx.admin });
  assert.is(test.status, 200, test.text);
});

test('with ORCH_CHATSVC_CA_BUNDLE: REST and socket both work; a certificate for another host name is refused', async (ctx) => {
  const ports = {
    ORCH_LISTEN: `127.0.0.1:${new URL(ctx.s.orch).port}`,
    CHATSVC_LISTEN: `127.0.0.1:${new URL(ctx.s.chat).port}`,
  };
  await ctx.s.restart({ ...ports, ORCH_CHATSVC_CA_BUNDLE: ctx.caFile });
  const r = await connect(ctx, ctx.profiles[2]!, ctx.good.port, true);
  assert.is(r.status, 201, r.text);
  await socketUp({ base: base(ctx, ctx.profiles[2]!), admin: ctx.admin });
  // The verify_tls false integration's socket now verifies against the bundle too.
  await socketUp({ base: base(ctx, ctx.profiles[1]!), admin: ctx.admin }, 'connected', 70_000);
  const wrong = await connect(ctx, ctx.profiles[3]!, ctx.wrong.port, true);
  assert.is(wrong.status, 502, wrong.text);
  assert.match(wrong.body.detail, /TLS error/);
  assert.match(wrong.body.detail, /ERR_TLS_CERT_ALTNAME_INVALID|altnames|host/i);
});

test.run();
