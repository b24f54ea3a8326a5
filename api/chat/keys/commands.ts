// Keys' use cases: fetch a bundle (claiming one one-time prekey on its own stream, so concurrent
// fetches never hand out the same one), rotate the signed prekey (its signature checked against
// the account's identity key), upload a batch of one-time prekeys. The slice's application layer
// and the only caller of the command runner for the key routes.

import { signedPrekeyVerifies } from '../../../crypto/prekeys.ts';
import { prekeyClaimDecider } from '../../../domain/chat/keys/claim.ts';
import { keysDecider } from '../../../domain/chat/keys/decider.ts';
import { keysStream, prekeyClaimStream } from '../../../domain/chat/streams.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import {
  bundleSource,
  identityKeyOf,
  signedPrekeyOf,
  unconsumedPrekeyCount,
  type BundleSource,
} from '../../../projections/chat/keys.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { prekeysOf } from '../accounts/accounts.ts';
import type { ChatDeps } from '../deps.ts';
import { fromBase64, toBase64 } from './bytes.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

/** Unconsumed prekeys a fetch looks at per round; concurrent fetches that lose a claim move to the next. */
const CANDIDATES = 16;
const ROUNDS = 5;

export interface KeyBundle {
  identity_key: number[];
  signed_prekey: { key_id: number; public_key: number[]; signature: number[] };
  one_time_prekey: { key_id: number; public_key: number[] } | null;
}

const bundleOf = (source: BundleSource, oneTime: { key_id: number; public_key: string } | null): KeyBundle => ({
  identity_key: fromBase64(source.identity_key),
  signed_prekey: {
    key_id: Number(source.signed_key_id),
    public_key: fromBase64(source.signed_public_key),
    signature: fromBase64(source.signed_signature),
  },
  one_time_prekey: oneTime && { key_id: oneTime.key_id, public_key: fromBase64(oneTime.public_key) },
});

/**
 * The bundle of `user_id`, handing out the lowest unconsumed one-time prekey this fetch can
 * claim (null once none is left). 404 `user_not_found` for an account without keys.
 */
export async function fetchBundle(deps: Deps, input: { user_id: string }, context: CommandContext): Promise<KeyBundle> {
  const userId = input.user_id;
  for (let round = 0; round < ROUNDS; round++) {
    const source = await bundleSource(deps.db, userId, CANDIDATES);
    if (!source) throw new ApiError(404, 'user_not_found', 'no such user');
    if (source.candidates.length === 0) return bundleOf(source, null);
    let remaining = source.unconsumed;
    for (const candidate of source.candidates) {
      remaining -= 1;
      try {
        await deps.commands.run(
          prekeyClaimStream(userId, candidate.key_id),
          prekeyClaimDecider,
          {
            type: 'Claim',
            user_id: userId,
            key_id: candidate.key_id,
            public_key: candidate.public_key,
            remaining: Math.max(0, remaining),
            fetched_by: context.actor.id ?? '',
            at: deps.clock.now().toISOString(),
          },
          context,
        );
        return bundleOf(source, candidate);
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'prekey_taken')) throw error;
      }
    }
    // Every candidate was taken by concurrent fetches: look again.
  }
  const last = await bundleSource(deps.db, userId, 0);
  if (!last) throw new ApiError(404, 'user_not_found', 'no such user');
  return bundleOf(last, null);
}

export interface SignedPrekey {
  key_id: number;
  public_key: number[];
  signature: number[];
}

/** Uploads or rotates the caller's signed prekey (400 `bad_signature` unless it verifies); the current and the previous one. */
export async function rotateSignedPrekey(
  deps: Deps,
  input: { user_id: string; signed_prekey: SignedPrekey },
  context: CommandContext,
) {
  const { user_id: userId, signed_prekey: body } = input;
  const identity = await identityKeyOf(deps.db, userId);
  if (
    !identity ||
    !signedPrekeyVerifies(
      Uint8Array.from(fromBase64(identity)),
      Uint8Array.from(body.public_key),
      Uint8Array.from(body.signature),
    )
  ) {
    throw new ApiError(400, 'bad_signature', "signature does not verify against the account's identity key");
  }
  await deps.commands.run(
    keysStream(userId),
    keysDecider,
    {
      type: 'UploadSignedPrekey',
      signed_prekey: {
        key_id: body.key_id,
        public_key: toBase64(body.public_key),
        signature: toBase64(body.signature),
      },
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  const row = await signedPrekeyOf(deps.db, userId);
  return {
    key_id: body.key_id,
    previous_key_id: row?.previous_key_id == null ? null : Number(row.previous_key_id),
    previous_valid_until: row?.previous_valid_until?.toISOString() ?? null,
  };
}

/** Uploads a batch of one-time prekeys; how many unconsumed ones the caller has after it. */
export async function uploadPrekeys(
  deps: Deps,
  input: { user_id: string; prekeys: Parameters<typeof prekeysOf>[0] },
  context: CommandContext,
): Promise<number> {
  const unconsumed = await unconsumedPrekeyCount(deps.db, input.user_id);
  await deps.commands.run(
    keysStream(input.user_id),
    keysDecider,
    { type: 'UploadPrekeys', prekeys: prekeysOf(input.prekeys), unconsumed, at: deps.clock.now().toISOString() },
    context,
  );
  return unconsumedPrekeyCount(deps.db, input.user_id);
}
