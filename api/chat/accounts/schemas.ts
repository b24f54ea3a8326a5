// Request and response schemas of chat accounts and authentication.

import { z } from '@hono/zod-openapi';
import { USERNAME_PATTERN } from '../../../domain/chat/accounts/decider.ts';
import { PREKEY_BATCH_MAX } from '../../../domain/chat/keys/decider.ts';
import { wireBytes } from '../keys/bytes.ts';

export const PROFILE_LIMITS = { display_name: 64, avatar_url: 2048, bio: 500, pronouns: 40 } as const;

const username = z
  .string()
  .regex(USERNAME_PATTERN, 'username: 3-32 letters, digits or underscores')
  .openapi({ example: 'alice_01' });
export const password = z.string().min(12, 'password must be at least 12 characters').max(1024);
const keyId = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const SignedPrekeyBody = z
  .strictObject({
    key_id: keyId,
    public_key: wireBytes(32, 'X25519 public key'),
    signature: wireBytes(64, 'Ed25519 signature by the identity key over the 32 public-key bytes'),
  })
  .openapi('SignedPrekey');

export const OneTimePrekeyBody = z
  .strictObject({ key_id: keyId, public_key: wireBytes(32, 'X25519 public key') })
  .openapi('OneTimePrekey');

export const RegisterBody = z
  .strictObject({
    username,
    display_name: z
      .string()
      .trim()
      .min(1)
      .max(PROFILE_LIMITS.display_name)
      .optional()
      .openapi({ description: 'defaults to the username' }),
    email: z.email().max(320),
    password,
    identity_key: wireBytes(32, 'Ed25519 identity public key'),
    signed_prekey: SignedPrekeyBody,
    one_time_prekeys: z.array(OneTimePrekeyBody).max(PREKEY_BATCH_MAX).default([]),
    invite_code: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .openapi({ description: 'required when CHATSVC_REGISTRATION=invite' }),
  })
  .openapi('ChatRegisterRequest');

export const LoginBody = z
  .strictObject({
    username: z.string().min(1).max(64),
    password: z.string().min(1).max(1024),
    totp_code: z
      .string()
      .max(64)
      .optional()
      .openapi({ description: 'required when TOTP is on: a 6-digit code or a backup code' }),
  })
  .openapi('ChatLoginRequest');

export const RefreshBody = z.strictObject({ refresh_token: z.string().min(1).max(256) }).openapi('RefreshRequest');

export const RecoverBody = z
  .strictObject({
    username: z.string().min(1).max(64),
    recovery_code: z.string().min(1).max(64),
    new_password: password,
  })
  .openapi('RecoverRequest');

export const OwnUser = z
  .object({
    id: z.uuid(),
    username: z.string(),
    display_name: z.string(),
    email: z.string(),
    avatar_url: z.string().nullable(),
    bio: z.string().nullable(),
    pronouns: z.string().nullable(),
    is_admin: z.boolean(),
    is_owner: z.boolean(),
    is_bot: z.boolean(),
    created_at: z.iso.datetime(),
    totp_enabled: z.boolean().optional(),
  })
  .openapi('OwnUser');

export const TokenPair = z
  .object({
    access_token: z.string().openapi({ description: 'JWT (HS256), 15 minutes' }),
    refresh_token: z.string().openapi({ description: 'opaque; one use: refreshing revokes it' }),
  })
  .openapi('TokenPair');

export const AuthResponse = TokenPair.extend({
  user: OwnUser,
  recovery_code: z.string().openapi({ description: 'shown only this once' }),
}).openapi('AuthResponse');

export const LoginResponse = TokenPair.extend({ user: OwnUser }).openapi('LoginResponse');

export const AuthConfig = z
  .object({
    registration_mode: z.enum(['open', 'invite', 'closed']),
    public_url: z.string(),
  })
  .openapi('AuthConfig');

const nullableText = (max: number) => z.string().trim().max(max).nullable().optional();

export const ProfileBody = z
  .strictObject({
    display_name: z.string().trim().min(1).max(PROFILE_LIMITS.display_name).optional(),
    avatar_url: z
      .url({ protocol: /^https?$/ })
      .max(PROFILE_LIMITS.avatar_url)
      .nullable()
      .optional(),
    bio: nullableText(PROFILE_LIMITS.bio),
    pronouns: nullableText(PROFILE_LIMITS.pronouns),
  })
  .refine((b) => Object.keys(b).length > 0, 'send at least one of display_name, avatar_url, bio, pronouns')
  .openapi('ProfileRequest');

export const ChangePasswordBody = z
  .strictObject({ current_password: z.string().min(1).max(1024), new_password: password })
  .openapi('ChangePasswordRequest');
export const PasswordBody = z.strictObject({ password: z.string().min(1).max(1024) }).openapi('PasswordConfirmation');

export const TurnCredentials = z
  .object({
    username: z.string().openapi({ description: '<expiry unix seconds>:<user id>' }),
    password: z.string().openapi({ description: 'base64 HMAC-SHA1 of the username under the TURN secret' }),
    ttl: z.number().int(),
    uris: z.array(z.string()),
  })
  .openapi('TurnCredentials');
