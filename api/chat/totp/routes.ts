// TOTP: POST /api/totp/setup (a secret and its otpauth:// URI, not active yet),
// POST /api/totp/verify (a code of that secret enables it and returns 10 single-use backup codes,
// shown once), POST /api/totp/disable (password required), GET /api/totp/backup-codes (how many
// remain). The secret is sealed at rest; backup codes are kept as hashes.

import { createRoute, z } from '@hono/zod-openapi';
import { hashCode, newBackupCode } from '../../../crypto/codes.ts';
import { verifyPassword } from '../../../crypto/password.ts';
import { openSecret, sealSecret } from '../../../crypto/seal.ts';
import { newTotpSecret, totpStep, totpUri } from '../../../crypto/totp.ts';
import { BACKUP_CODE_COUNT, totpDecider } from '../../../domain/chat/totp/decider.ts';
import { totpStream } from '../../../domain/chat/totp/events.ts';
import { chatUserById } from '../../../projections/chat/accounts.ts';
import { totpOf } from '../../../projections/chat/totp.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { wrongPassword } from '../accounts/routes.ts';
import { PasswordBody } from '../accounts/schemas.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { totpSealContext } from './second-factor.ts';

const tags = ['totp'];

const TotpSetup = z.object({
  secret: z.string().openapi({ description: 'base32; shown only here' }),
  otpauth_uri: z.string().openapi({ description: 'otpauth://totp/... for a QR code' }),
}).openapi('TotpSetup');
const TotpEnabledResponse = z.object({ enabled: z.literal(true), backup_codes: z.array(z.string()).length(BACKUP_CODE_COUNT) }).openapi('TotpEnabled');
const CodeBody = z.strictObject({ code: z.string().min(1).max(16) }).openapi('TotpCode');

export function totpRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);

  app.openapi(createRoute({
    method: 'post', path: '/api/totp/setup', tags, summary: 'Start TOTP set-up: a new secret, not active until verified', middleware: [auth] as const,
    responses: { 200: ok(TotpSetup, 'the secret (Cache-Control: no-store)'), ...chatErrors({ ...AUTH_ERRORS, 409: 'TOTP is already enabled' }) },
  }), async (c) => {
    const principal = c.get('chatUser');
    const secret = newTotpSecret();
    await deps.commands.run(totpStream(principal.user_id), totpDecider, {
      type: 'Setup', user_id: principal.user_id, secret_sealed: sealSecret(deps.sealKey, secret, totpSealContext(principal.user_id)), at: deps.clock.now().toISOString(),
    }, actorOf(c));
    c.header('Cache-Control', 'no-store');
    return c.json({ secret, otpauth_uri: totpUri(secret, principal.username) }, 200);
  });

  app.openapi(createRoute({
    method: 'post', path: '/api/totp/verify', tags, summary: 'Enable TOTP with a code of the set-up secret; returns the backup codes once',
    middleware: [auth] as const,
    request: { body: jsonBody(CodeBody) },
    responses: {
      200: ok(TotpEnabledResponse, '10 single-use backup codes (Cache-Control: no-store)'),
      ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error, or no set-up in progress', 401: 'wrong code', 409: 'TOTP is already enabled', 413: 'body too large' }),
    },
  }), async (c) => {
    const principal = c.get('chatUser');
    const row = await totpOf(deps.db, principal.user_id);
    if (row?.enabled) throw new ApiError(409, 'totp_already_enabled', 'TOTP is already enabled');
    if (!row?.secret_sealed) throw new ApiError(400, 'totp_not_set_up', 'call /api/totp/setup first');
    const now = deps.clock.now();
    const step = totpStep(openSecret(deps.sealKey, row.secret_sealed, totpSealContext(principal.user_id)), c.req.valid('json').code.trim(), now.getTime());
    if (step === null) throw new ApiError(401, 'invalid_totp_code', 'invalid TOTP code');
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
    await deps.commands.run(totpStream(principal.user_id), totpDecider, {
      type: 'Enable', user_id: principal.user_id, counter: step, backup_code_hashes: codes.map(hashCode), at: now.toISOString(),
    }, actorOf(c));
    c.header('Cache-Control', 'no-store');
    return c.json({ enabled: true as const, backup_codes: codes }, 200);
  });

  app.openapi(createRoute({
    method: 'post', path: '/api/totp/disable', tags, summary: 'Turn TOTP off (password required)', middleware: [auth] as const,
    request: { body: jsonBody(PasswordBody) },
    responses: { 204: { description: 'disabled' }, ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error, or TOTP is not enabled', 403: 'the password is incorrect', 413: 'body too large' }) },
  }), async (c) => {
    const principal = c.get('chatUser');
    const user = await chatUserById(deps.db, principal.user_id);
    if (!user?.password_hash || !(await verifyPassword(c.req.valid('json').password, user.password_hash))) throw wrongPassword();
    await deps.commands.run(totpStream(principal.user_id), totpDecider, { type: 'Disable', user_id: principal.user_id, at: deps.clock.now().toISOString() }, actorOf(c));
    return c.body(null, 204);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/totp/backup-codes', tags, summary: 'How many backup codes remain', middleware: [auth] as const,
    responses: { 200: ok(z.object({ enabled: z.boolean(), remaining: z.number().int() }).openapi('BackupCodesRemaining'), 'the count'), ...chatErrors(AUTH_ERRORS) },
  }), async (c) => {
    const row = await totpOf(deps.db, c.get('chatUser').user_id);
    return c.json({ enabled: row?.enabled ?? false, remaining: row?.enabled ? row.backup_codes_remaining : 0 }, 200);
  });

  return app;
}
