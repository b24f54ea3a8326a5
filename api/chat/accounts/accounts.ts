// The accounts slice's shared pieces: the account as its owner sees it, the checks of a
// registration's keys (bots register keys the same way), and the password checks (sign-in, and
// confirming the caller's password before a change; TOTP's disable uses the same answer). The use
// cases are in commands.ts.

import { verifyPassword } from '../../../crypto/password.ts';
import { signedPrekeyVerifies, validIdentityKey } from '../../../crypto/prekeys.ts';
import type { PublicPrekey } from '../../../domain/chat/keys/events.ts';
import { chatUserByUsername, type ChatUserRow } from '../../../projections/chat/accounts.ts';
import { ApiError } from '../../shared/http-errors.ts';
import type { ChatDeps } from '../deps.ts';
import { toBase64 } from '../keys/bytes.ts';

export interface Registration {
  username: string;
  display_name?: string | undefined;
  email: string;
  password: string;
  identity_key: number[];
  signed_prekey: { key_id: number; public_key: number[]; signature: number[] };
  one_time_prekeys: { key_id: number; public_key: number[] }[];
  invite_code?: string | undefined;
}

const bytes = (values: number[]) => Uint8Array.from(values);

/** The account as its owner sees it (auth responses, /api/account/me). */
export function ownView(user: ChatUserRow, extra: { totp_enabled?: boolean } = {}) {
  return {
    id: user.id,
    username: user.username,
    display_name: user.display_name,
    email: user.email ?? '',
    avatar_url: user.avatar_url,
    bio: user.bio,
    pronouns: user.pronouns,
    is_admin: user.is_admin,
    is_owner: user.is_owner,
    is_bot: user.is_bot,
    created_at: user.created_at.toISOString(),
    ...extra,
  };
}

/** The keys must be what the e2ee library will accept from a bundle; checked before anything is written. */
export function checkKeys(input: Pick<Registration, 'identity_key' | 'signed_prekey' | 'one_time_prekeys'>): void {
  const ids = input.one_time_prekeys.map((p) => p.key_id);
  if (new Set(ids).size !== ids.length)
    throw new ApiError(400, 'duplicate_prekey_id', 'one-time prekey ids repeat within the upload');
  const identity = bytes(input.identity_key);
  if (!validIdentityKey(identity))
    throw new ApiError(400, 'invalid_identity_key', 'identity_key is not a valid Ed25519 public key');
  if (!signedPrekeyVerifies(identity, bytes(input.signed_prekey.public_key), bytes(input.signed_prekey.signature))) {
    throw new ApiError(400, 'bad_signature', 'signed_prekey.signature does not verify against identity_key');
  }
}

export const prekeysOf = (list: { key_id: number; public_key: number[] }[]): PublicPrekey[] =>
  list.map((p) => ({ key_id: p.key_id, public_key: toBase64(p.public_key) }));

// A hash of nothing in particular, so an unknown username costs the same time as a known one.
const DECOY_HASH = 'scrypt$17$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

export const wrongCredentials = () => new ApiError(401, 'invalid_credentials', 'invalid username or password');

/** The live account behind a username and password, or the 401. */
export async function checkPassword(
  deps: Pick<ChatDeps, 'db'>,
  username: string,
  password: string,
): Promise<ChatUserRow> {
  const user = await chatUserByUsername(deps.db, username);
  const ok = await verifyPassword(password, user?.password_hash ?? DECOY_HASH);
  if (!ok || !user?.password_hash) throw wrongCredentials();
  return user;
}

export const wrongPassword = () => new ApiError(403, 'wrong_password', 'the password is incorrect');
