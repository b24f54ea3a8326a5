// The chat deciders, given/when/then: accounts, sessions (rotation and reuse), TOTP, keys
// (one-time prekeys handed out once, uploads), blocks and invites.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { accountDecider } from '../../../domain/chat/accounts/decider.ts';
import type { AccountEvent } from '../../../domain/chat/accounts/events.ts';
import { invalidInvite, inviteDecider } from '../../../domain/chat/invites/decider.ts';
import type { InviteEvent } from '../../../domain/chat/invites/events.ts';
import { prekeyClaimDecider } from '../../../domain/chat/keys/claim.ts';
import type { PrekeyClaimEvent, KeysEvent } from '../../../domain/chat/keys/events.ts';
import { keysDecider, SIGNED_PREKEY_GRACE_MS } from '../../../domain/chat/keys/decider.ts';
import { chatSessionDecider } from '../../../domain/chat/sessions/decider.ts';
import type { ChatSessionEvent } from '../../../domain/chat/sessions/events.ts';
import { totpDecider } from '../../../domain/chat/totp/decider.ts';
import type { TotpEvent } from '../../../domain/chat/totp/events.ts';
import { blockDecider } from '../../../domain/chat/users/decider.ts';
import type { BlockEvent } from '../../../domain/chat/users/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2030-01-01T00:00:00.000Z';
const U = '11111111-1111-4111-8111-111111111111';
const S = '22222222-2222-4222-8222-222222222222';

const test = suite('chat deciders');

const registered: AccountEvent = {
  type: 'UserRegistered',
  data: {
    user_id: U,
    username: 'alice',
    display_name: 'alice',
    email: 'a@x.test',
    password_hash: 'h',
    recovery_code_hash: 'r1',
    is_owner: true,
    is_admin: true,
    invite_id: null,
    at,
  },
};

test('accounts: register once; recover needs the current code and rotates it; deleted accounts refuse', () => {
  const account = spec(accountDecider);
  account([])
    .when({
      type: 'Register',
      user_id: U,
      username: 'alice',
      display_name: 'alice',
      email: 'a@x.test',
      password_hash: 'h',
      recovery_code_hash: 'r1',
      is_owner: true,
      invite_id: null,
      at,
    })
    .then([registered]);
  account([registered])
    .when({
      type: 'Register',
      user_id: U,
      username: 'alice',
      display_name: 'alice',
      email: 'a@x.test',
      password_hash: 'h',
      recovery_code_hash: 'r1',
      is_owner: false,
      invite_id: null,
      at,
    })
    .thenError('user_exists');
  account([registered])
    .when({ type: 'Recover', presented_code_hash: 'wrong', password_hash: 'h2', new_recovery_code_hash: 'r2', at })
    .thenError('invalid_recovery');
  const recovered: AccountEvent = {
    type: 'AccountRecovered',
    data: { user_id: U, password_hash: 'h2', recovery_code_hash: 'r2', at },
  };
  account([registered])
    .when({ type: 'Recover', presented_code_hash: 'r1', password_hash: 'h2', new_recovery_code_hash: 'r2', at })
    .then([recovered]);
  account([registered, recovered])
    .when({ type: 'Recover', presented_code_hash: 'r1', password_hash: 'h3', new_recovery_code_hash: 'r3', at })
    .thenError('invalid_recovery');
  const deleted: AccountEvent = { type: 'AccountDeleted', data: { user_id: U, at } };
  account([registered, deleted])
    .when({ type: 'Recover', presented_code_hash: 'r1', password_hash: 'h2', new_recovery_code_hash: 'r2', at })
    .thenError('invalid_recovery');
  account([registered, deleted]).when({ type: 'ChangePassword', password_hash: 'x', at }).thenError('user_not_found');
  account([]).when({ type: 'Delete', at }).thenError('user_not_found');
  account([registered])
    .when({ type: 'UpdateProfile', changes: { display_name: 'alice' }, at })
    .then([]);
  account([registered])
    .when({ type: 'UpdateProfile', changes: { bio: 'hi' }, at })
    .then([
      {
        type: 'AccountProfileUpdated',
        data: { user_id: U, display_name: 'alice', avatar_url: null, bio: 'hi', pronouns: null, at },
      },
    ]);
});

test('sessions: rotation accepts the current token only; a rotated-away token revokes the session', () => {
  const session = spec(chatSessionDecider);
  const started: ChatSessionEvent = {
    type: 'ChatSessionStarted',
    data: { session_id: S, user_id: U, refresh_hash: 'h1', origin: 'login', user_agent: null, at },
  };
  const rotated: ChatSessionEvent = {
    type: 'RefreshTokenRotated',
    data: { session_id: S, user_id: U, refresh_hash: 'h2', at },
  };
  session([started]).when({ type: 'Refresh', presented_hash: 'h1', new_hash: 'h2', at }).then([rotated]);
  session([started, rotated])
    .when({ type: 'Refresh', presented_hash: 'h1', new_hash: 'h3', at })
    .then([{ type: 'SessionRevoked', data: { session_id: S, user_id: U, reason: 'refresh_token_reuse', at } }]);
  session([started, rotated])
    .when({ type: 'Refresh', presented_hash: 'never-issued', new_hash: 'h3', at })
    .thenError('invalid_refresh_token');
  session([]).when({ type: 'Refresh', presented_hash: 'h1', new_hash: 'h2', at }).thenError('invalid_refresh_token');
  const revoked: ChatSessionEvent = {
    type: 'SessionRevoked',
    data: { session_id: S, user_id: U, reason: 'revoked', at },
  };
  session([started, revoked])
    .when({ type: 'Refresh', presented_hash: 'h1', new_hash: 'h2', at })
    .thenError('invalid_refresh_token');
  session([started, revoked]).when({ type: 'Revoke', reason: 'revoke_all', at }).then([]);
  session([started])
    .when({ type: 'Start', session_id: S, user_id: U, refresh_hash: 'x', origin: 'login', user_agent: null, at })
    .thenError('session_exists');
});

test('totp: enable needs a set-up; a step is accepted once and never an earlier one; backup codes once', () => {
  const totp = spec(totpDecider);
  const setup: TotpEvent = { type: 'TotpSetupStarted', data: { user_id: U, secret_sealed: 'v1.x', at } };
  const enabled: TotpEvent = {
    type: 'TotpEnabled',
    data: { user_id: U, counter: 100, backup_code_hashes: ['b1', 'b2'], at },
  };
  totp([]).when({ type: 'Enable', user_id: U, counter: 100, backup_code_hashes: [], at }).thenError('totp_not_set_up');
  totp([setup])
    .when({ type: 'Enable', user_id: U, counter: 100, backup_code_hashes: ['b1', 'b2'], at })
    .then([enabled]);
  totp([setup, enabled])
    .when({ type: 'Setup', user_id: U, secret_sealed: 'v1.y', at })
    .thenError('totp_already_enabled');
  totp([setup, enabled]).when({ type: 'UseCode', user_id: U, counter: 100, at }).thenError('invalid_totp_code');
  totp([setup, enabled]).when({ type: 'UseCode', user_id: U, counter: 99, at }).thenError('invalid_totp_code');
  totp([setup, enabled])
    .when({ type: 'UseCode', user_id: U, counter: 101, at })
    .then([{ type: 'TotpCodeUsed', data: { user_id: U, counter: 101, at } }]);
  const used: TotpEvent = { type: 'BackupCodeUsed', data: { user_id: U, code_hash: 'b1', at } };
  totp([setup, enabled]).when({ type: 'UseBackupCode', user_id: U, code_hash: 'b1', at }).then([used]);
  totp([setup, enabled, used])
    .when({ type: 'UseBackupCode', user_id: U, code_hash: 'b1', at })
    .thenError('invalid_totp_code');
  totp([setup]).when({ type: 'UseCode', user_id: U, counter: 101, at }).thenError('invalid_totp_code');
  totp([setup]).when({ type: 'Disable', user_id: U, at }).thenError('totp_not_enabled');
  // Disabling keeps the last step: re-enabling cannot accept a step already used.
  const disabled: TotpEvent = { type: 'TotpDisabled', data: { user_id: U, at } };
  totp([setup, enabled, disabled, setup])
    .when({ type: 'Enable', user_id: U, counter: 100, backup_code_hashes: [], at })
    .thenError('invalid_totp_code');
});

test('keys: uploads keep ids unique per account and the store bounded; a prekey is claimed once', () => {
  const keys = spec(keysDecider);
  const signed = { key_id: 1, public_key: 'spk', signature: 'sig' };
  const history: KeysEvent[] = keysDecider.decide(
    {
      type: 'RegisterKeys',
      user_id: U,
      identity_key: 'ik',
      signed_prekey: signed,
      one_time_prekeys: [
        { key_id: 1, public_key: 'a' },
        { key_id: 2, public_key: 'b' },
      ],
      at,
    },
    keysDecider.initialState(),
  );
  assert.equal(
    history.map((e) => e.type),
    ['IdentityKeyRegistered', 'SignedPrekeyUploaded', 'PrekeysUploaded'],
  );
  // The same registration again (it failed before its account) registers nothing more; other keys are refused,
  // and so is a second registration through the keys route (no `resume`).
  keys(history)
    .when({
      type: 'RegisterKeys',
      user_id: U,
      identity_key: 'ik',
      signed_prekey: signed,
      one_time_prekeys: [],
      at,
      resume: true,
    })
    .then([]);
  keys(history)
    .when({
      type: 'RegisterKeys',
      user_id: U,
      identity_key: 'ik2',
      signed_prekey: signed,
      one_time_prekeys: [],
      at,
      resume: true,
    })
    .thenError('keys_exist');
  keys(history)
    .when({ type: 'RegisterKeys', user_id: U, identity_key: 'ik', signed_prekey: signed, one_time_prekeys: [], at })
    .thenError('keys_exist');
  keys(history)
    .when({ type: 'UploadPrekeys', prekeys: [{ key_id: 3, public_key: 'c' }], unconsumed: 2, at })
    .then([{ type: 'PrekeysUploaded', data: { user_id: U, prekeys: [{ key_id: 3, public_key: 'c' }], at } }]);
  keys(history)
    .when({ type: 'UploadPrekeys', prekeys: [{ key_id: 1, public_key: 'z' }], unconsumed: 0, at })
    .thenError('prekey_id_in_use');
  keys(history)
    .when({
      type: 'UploadPrekeys',
      prekeys: [
        { key_id: 3, public_key: 'z' },
        { key_id: 3, public_key: 'y' },
      ],
      unconsumed: 2,
      at,
    })
    .thenError('duplicate_prekey_id');
  keys(history)
    .when({
      type: 'UploadPrekeys',
      prekeys: Array.from({ length: 201 }, (_, i) => ({ key_id: 10 + i, public_key: 'k' })),
      unconsumed: 2,
      at,
    })
    .thenError('too_many_prekeys');
  keys(history)
    .when({ type: 'UploadPrekeys', prekeys: [{ key_id: 3, public_key: 'c' }], unconsumed: 1000, at })
    .thenError('prekey_store_full');
  const removed: KeysEvent = { type: 'KeysRemoved', data: { user_id: U, at } };
  keys([...history, removed])
    .when({ type: 'UploadPrekeys', prekeys: [{ key_id: 3, public_key: 'c' }], unconsumed: 0, at })
    .thenError('user_not_found');
  keys(history)
    .when({ type: 'UploadSignedPrekey', signed_prekey: { key_id: 2, public_key: 'spk2', signature: 'sig2' }, at })
    .then([
      {
        type: 'SignedPrekeyUploaded',
        data: {
          user_id: U,
          key_id: 2,
          public_key: 'spk2',
          signature: 'sig2',
          previous_key_id: 1,
          previous_valid_until: new Date(Date.parse(at) + SIGNED_PREKEY_GRACE_MS).toISOString(),
          at,
        },
      },
    ]);
  keys(history).when({ type: 'UploadSignedPrekey', signed_prekey: signed, at }).then([]);
  keys(history)
    .when({ type: 'UploadSignedPrekey', signed_prekey: { ...signed, public_key: 'other' }, at })
    .thenError('signed_prekey_id_in_use');

  const claim = spec(prekeyClaimDecider);
  const claimed: PrekeyClaimEvent = {
    type: 'PrekeyConsumed',
    data: { user_id: U, key_id: 1, public_key: 'a', remaining: 1, fetched_by: S, at },
  };
  claim([])
    .when({ type: 'Claim', ...claimed.data })
    .then([claimed]);
  claim([claimed])
    .when({ type: 'Claim', ...claimed.data, fetched_by: U })
    .thenError('prekey_taken');
});

test('blocks and invites', () => {
  const blocks = spec(blockDecider);
  const blocked: BlockEvent = { type: 'UserBlocked', data: { user_id: U, blocked_user_id: S, at } };
  blocks([]).when({ type: 'Block', user_id: U, blocked_user_id: S, at }).then([blocked]);
  blocks([blocked]).when({ type: 'Block', user_id: U, blocked_user_id: S, at }).then([]);
  blocks([]).when({ type: 'Unblock', user_id: U, blocked_user_id: S, at }).then([]);
  blocks([]).when({ type: 'Block', user_id: U, blocked_user_id: U, at }).thenError('cannot_block_self');

  const invites = spec(inviteDecider);
  const created: InviteEvent = {
    type: 'RegistrationInviteCreated',
    data: { invite_id: S, code_hash: 'c', created_by: U, expires_at: '2030-01-02T00:00:00.000Z', at },
  };
  const redeemed: InviteEvent = { type: 'RegistrationInviteRedeemed', data: { invite_id: S, user_id: U, at } };
  invites([created]).when({ type: 'Redeem', user_id: U, at }).then([redeemed]);
  invites([created, redeemed]).when({ type: 'Redeem', user_id: S, at }).thenError(invalidInvite().code);
  // The same registration again (it failed after redeeming, before its account): nothing more.
  invites([created, redeemed]).when({ type: 'Redeem', user_id: U, at }).then([]);
  invites([created]).when({ type: 'Redeem', user_id: U, at: '2030-01-02T00:00:00.000Z' }).thenError('invalid_invite');
  invites([]).when({ type: 'Redeem', user_id: U, at }).thenError('invalid_invite');
  invites([]).when({ type: 'Revoke', by: U, at }).thenError('invite_not_found');
  // Created once; revoked once, and not after it was redeemed; a revoked invite redeems nothing.
  invites([])
    .when({ type: 'Create', invite_id: S, code_hash: 'c', created_by: U, expires_at: '2030-01-02T00:00:00.000Z', at })
    .then([created]);
  invites([created])
    .when({ type: 'Create', invite_id: S, code_hash: 'c', created_by: U, expires_at: null, at })
    .thenError('invite_exists');
  const revoked: InviteEvent = { type: 'RegistrationInviteRevoked', data: { invite_id: S, revoked_by: U, at } };
  invites([created]).when({ type: 'Revoke', by: U, at }).then([revoked]);
  invites([created, revoked]).when({ type: 'Revoke', by: U, at }).then([]);
  invites([created, redeemed]).when({ type: 'Revoke', by: U, at }).then([]);
  invites([created, revoked]).when({ type: 'Redeem', user_id: U, at }).thenError('invalid_invite');
});

test('accounts: bots registered once; suspend, admin role and password reset by an admin, with their protections', () => {
  const account = spec(accountDecider);
  const A = '33333333-3333-4333-8333-333333333333';
  const member: AccountEvent = {
    type: 'UserRegistered',
    data: { ...registered.data, user_id: A, username: 'bob', is_owner: false, is_admin: false },
  };
  const bot: AccountEvent = {
    type: 'BotRegistered',
    data: { user_id: A, username: 'ci_bot', display_name: 'CI', created_by: U, integration: null, at },
  };
  account([])
    .when({
      type: 'RegisterBot',
      user_id: A,
      username: 'ci_bot',
      display_name: 'CI',
      created_by: U,
      integration: null,
      at,
    })
    .then([bot]);
  account([bot])
    .when({
      type: 'RegisterBot',
      user_id: A,
      username: 'ci_bot',
      display_name: 'CI',
      created_by: U,
      integration: null,
      at,
    })
    .thenError('user_exists');
  // Suspend: not the owner, not oneself; once. Unsuspend only a suspended account.
  const suspended: AccountEvent = { type: 'UserSuspended', data: { user_id: A, reason: 'spam', by: U, at } };
  account([member]).when({ type: 'Suspend', reason: 'spam', by: U, at }).then([suspended]);
  account([member, suspended]).when({ type: 'Suspend', reason: 'spam', by: U, at }).then([]);
  account([registered]).when({ type: 'Suspend', reason: 'x', by: A, at }).thenError('owner_protected');
  account([member]).when({ type: 'Suspend', reason: 'x', by: A, at }).thenError('cannot_suspend_self');
  account([]).when({ type: 'Suspend', reason: 'x', by: U, at }).thenError('user_not_found');
  account([member, suspended])
    .when({ type: 'Unsuspend', by: U, at })
    .then([{ type: 'UserUnsuspended', data: { user_id: A, by: U, at } }]);
  account([member]).when({ type: 'Unsuspend', by: U, at }).then([]);
  // Admin role: changes only; never for a bot; the owner stays an admin.
  account([member])
    .when({ type: 'SetAdmin', is_admin: true, by: U, at })
    .then([{ type: 'AdminRoleChanged', data: { user_id: A, is_admin: true, by: U, at } }]);
  account([member]).when({ type: 'SetAdmin', is_admin: false, by: U, at }).then([]);
  account([bot]).when({ type: 'SetAdmin', is_admin: true, by: U, at }).thenError('bot_account');
  account([registered]).when({ type: 'SetAdmin', is_admin: false, by: A, at }).thenError('owner_protected');
  // Password reset by an admin: people only.
  account([member])
    .when({ type: 'ResetPassword', password_hash: 'h9', by: U, at })
    .then([{ type: 'PasswordReplaced', data: { user_id: A, password_hash: 'h9', by: U, at } }]);
  account([bot]).when({ type: 'ResetPassword', password_hash: 'h9', by: U, at }).thenError('bot_account');
});

test.run();
