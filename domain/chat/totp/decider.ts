// Two-factor authentication of a chat account (`chat.totp-<user uuid>`): RFC 6238 TOTP set up,
// verified (which enables it and issues backup codes), used at login, disabled. The secret is
// sealed before it reaches this module; backup codes arrive as SHA-256 hashes. A TOTP time step
// once accepted is never accepted again (nor any earlier one), so a code observed in use cannot
// be replayed within its window; each backup code works once.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { TotpEvent } from './events.ts';

export type TotpCommand =
  | { type: 'Setup'; user_id: string; secret_sealed: string; at: string }
  | { type: 'Enable'; user_id: string; counter: number; backup_code_hashes: string[]; at: string }
  | { type: 'Disable'; user_id: string; at: string }
  | { type: 'UseCode'; user_id: string; counter: number; at: string }
  | { type: 'UseBackupCode'; user_id: string; code_hash: string; at: string };

export interface TotpState {
  /** The secret being set up (not active yet), or the active one once enabled. */
  secret_sealed: string | null;
  enabled: boolean;
  /** The latest time step accepted; earlier and equal steps are refused. */
  last_counter: number;
  backup_code_hashes: string[];
}

const initialState = (): TotpState => ({
  secret_sealed: null,
  enabled: false,
  last_counter: -1,
  backup_code_hashes: [],
});

function evolve(state: TotpState, event: TotpEvent): TotpState {
  switch (event.type) {
    case 'TotpSetupStarted':
      return { ...state, secret_sealed: event.data.secret_sealed, enabled: false };
    case 'TotpEnabled':
      return {
        ...state,
        enabled: true,
        last_counter: Math.max(state.last_counter, event.data.counter),
        backup_code_hashes: event.data.backup_code_hashes,
      };
    case 'TotpDisabled':
      return { ...initialState(), last_counter: state.last_counter };
    case 'TotpCodeUsed':
      return { ...state, last_counter: Math.max(state.last_counter, event.data.counter) };
    case 'BackupCodeUsed':
      return { ...state, backup_code_hashes: state.backup_code_hashes.filter((h) => h !== event.data.code_hash) };
  }
}

export const invalidTotpCode = () =>
  new DomainError('unauthorized', 'invalid_totp_code', 'invalid or already used TOTP code');

function decide(command: TotpCommand, state: TotpState): TotpEvent[] {
  const { user_id, at } = command;
  switch (command.type) {
    case 'Setup':
      if (state.enabled)
        throw new DomainError('conflict', 'totp_already_enabled', 'TOTP is already enabled; disable it first');
      return [{ type: 'TotpSetupStarted', data: { user_id, secret_sealed: command.secret_sealed, at } }];
    case 'Enable':
      if (state.enabled) throw new DomainError('conflict', 'totp_already_enabled', 'TOTP is already enabled');
      if (!state.secret_sealed) throw new DomainError('invalid', 'totp_not_set_up', 'call /api/totp/setup first');
      if (command.counter <= state.last_counter) throw invalidTotpCode();
      return [
        {
          type: 'TotpEnabled',
          data: { user_id, counter: command.counter, backup_code_hashes: command.backup_code_hashes, at },
        },
      ];
    case 'Disable':
      if (!state.enabled) throw new DomainError('invalid', 'totp_not_enabled', 'TOTP is not enabled');
      return [{ type: 'TotpDisabled', data: { user_id, at } }];
    case 'UseCode':
      if (!state.enabled || command.counter <= state.last_counter) throw invalidTotpCode();
      return [{ type: 'TotpCodeUsed', data: { user_id, counter: command.counter, at } }];
    case 'UseBackupCode':
      if (!state.enabled || !state.backup_code_hashes.includes(command.code_hash)) throw invalidTotpCode();
      return [{ type: 'BackupCodeUsed', data: { user_id, code_hash: command.code_hash, at } }];
  }
}

export const totpDecider: Decider<TotpState, TotpCommand, TotpEvent> = { initialState, evolve, decide };

export const BACKUP_CODE_COUNT = 10;
