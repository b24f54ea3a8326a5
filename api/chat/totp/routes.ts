// TOTP: POST /api/totp/setup (a secret and its otpauth:// URI, not active yet),
// POST /api/totp/verify (a code of that secret enables it and returns 10 single-use backup codes,
// shown once), POST /api/totp/disable (password required), GET /api/totp/backup-codes (how many
// remain). The secret is sealed at rest; backup codes are kept as hashes.

import { createRoute, z } from '@hono/zod-openapi';
import { totpUri } from '../../../crypto/totp.ts';
import { BACKUP_CODE_COUNT } from '../../../domain/chat/totp/decider.ts';
import { totpOf } from '../../../projections/chat/totp.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { PasswordBody } from '../accounts/schemas.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { disableTotp, setupTotp, verifyTotp } from './commands.ts';

const tags = ['totp'];

const TotpSetup = z
  .object({
    secret: z.string().openapi({ description: 'base32; shown only here' }),
    otpauth_uri: z.string().openapi({ description: 'otpauth://totp/... for a QR code' }),
  })
  .openapi('TotpSetup');
const TotpEnabledResponse = z
  .object({ enabled: z.literal(true), backup_codes: z.array(z.string()).length(BACKUP_CODE_COUNT) })
  .openapi('TotpEnabled');
const CodeBody = z.strictObject({ code: z.string().min(1).max(16) }).openapi('TotpCode');

export function totpRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/totp/setup',
      tags,
      summary: 'Start TOTP set-up: a new secret, not active until verified',
      middleware: [auth] as const,
      responses: {
        200: ok(TotpSetup, 'the secret (Cache-Control: no-store)'),
        ...chatErrors({ ...AUTH_ERRORS, 409: 'TOTP is already enabled' }),
      },
    }),
    async (c) => {
      const principal = c.get('chatUser');
      const secret = await setupTotp(deps, { user_id: principal.user_id }, actorOf(c));
      c.header('Cache-Control', 'no-store');
      return c.json({ secret, otpauth_uri: totpUri(secret, principal.username) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/totp/verify',
      tags,
      summary: 'Enable TOTP with a code of the set-up secret; returns the backup codes once',
      middleware: [auth] as const,
      request: { body: jsonBody(CodeBody) },
      responses: {
        200: ok(TotpEnabledResponse, '10 single-use backup codes (Cache-Control: no-store)'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error, or no set-up in progress',
          401: 'wrong code',
          409: 'TOTP is already enabled',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const codes = await verifyTotp(
        deps,
        { user_id: c.get('chatUser').user_id, code: c.req.valid('json').code },
        actorOf(c),
      );
      c.header('Cache-Control', 'no-store');
      return c.json({ enabled: true as const, backup_codes: codes }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/totp/disable',
      tags,
      summary: 'Turn TOTP off (password required)',
      middleware: [auth] as const,
      request: { body: jsonBody(PasswordBody) },
      responses: {
        204: { description: 'disabled' },
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error, or TOTP is not enabled',
          403: 'the password is incorrect',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      await disableTotp(
        deps,
        { user_id: c.get('chatUser').user_id, password: c.req.valid('json').password },
        actorOf(c),
      );
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/totp/backup-codes',
      tags,
      summary: 'How many backup codes remain',
      middleware: [auth] as const,
      responses: {
        200: ok(
          z.object({ enabled: z.boolean(), remaining: z.number().int() }).openapi('BackupCodesRemaining'),
          'the count',
        ),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) => {
      const row = await totpOf(deps.db, c.get('chatUser').user_id);
      return c.json({ enabled: row?.enabled ?? false, remaining: row?.enabled ? row.backup_codes_remaining : 0 }, 200);
    },
  );

  return app;
}
