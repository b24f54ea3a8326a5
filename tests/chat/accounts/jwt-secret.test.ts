// The access-token key: generated once and kept sealed under DATA_DIR (so every instance on the
// same data directory and server key signs alike, and restarts keep tokens valid), or taken from
// CHATSVC_JWT_SECRET(_FILE).

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../../infra/config.ts';
import { chatJwtSecret } from '../../../main/chat-secrets.ts';

const test = suite<{ dir: string }>('chat access-token key');
test.before(async (ctx) => {
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-jwt-'));
});
test.after(async ({ dir }) => rm(dir, { recursive: true, force: true }));

const key = new Uint8Array(32).fill(7);

test('generated once under DATA_DIR, sealed; read back the same', async ({ dir }) => {
  const config = loadConfig({ DATA_DIR: dir }).chat;
  const first = chatJwtSecret(config, key);
  assert.ok(first.length >= 40);
  const stored = await readFile(path.join(dir, 'chat-jwt.sealed'), 'utf8');
  assert.match(stored, /^v1\./);
  assert.not.ok(stored.includes(first));
  assert.is(chatJwtSecret(config, key), first);
  // Another server key cannot open it.
  assert.throws(() => chatJwtSecret(config, new Uint8Array(32).fill(8)), /authentication failed/);
});

test('CHATSVC_JWT_SECRET or its _FILE wins', async ({ dir }) => {
  assert.is(
    chatJwtSecret(loadConfig({ DATA_DIR: dir, CHATSVC_JWT_SECRET: 'configured-secret-value' }).chat, key),
    'configured-secret-value',
  );
  const file = path.join(dir, 'jwt.txt');
  await writeFile(file, 'from-a-file\n');
  assert.is(chatJwtSecret(loadConfig({ DATA_DIR: dir, CHATSVC_JWT_SECRET_FILE: file }).chat, key), 'from-a-file');
});

test('configuration: registration mode and numbers are checked', () => {
  assert.throws(() => loadConfig({ CHATSVC_REGISTRATION: 'sometimes' }), /open, invite or closed/);
  assert.throws(() => loadConfig({ CHATSVC_AUTH_RATE_PER_MIN: '0' }), /positive integer/);
  const chat = loadConfig({}).chat;
  assert.is(chat.registration, 'open');
  assert.is(chat.authRatePerMin, 10);
  assert.is(chat.apiRatePerSec, 20);
  assert.equal(chat.turnUrls, []);
  assert.is(chat.turnSecret, null);
});

test.run();
