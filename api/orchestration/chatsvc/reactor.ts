// The bot sockets' supervisor as a processor (DESIGN.md: reactors): a reactor of scope `each`
// (infra/processors/reactor.ts), since every instance runs its own sockets and competes for each
// integration's socket with its own advisory lock (./supervisor.ts). It
// - reconciles the sockets with the integrations read model when it starts (and after a failure);
// - reacts to ChatIntegrationConnected (start the socket), IntegrationRevokedExternally and
//   ChatIntegrationDeleted (stop it) once the read model has applied them, by the same
//   reconciliation (the read model says what the latest of them means);
// - makes the full pass every ORCH_CHATSVC_SUPERVISOR_SECS: retrying standby sockets and the
//   weekly signed-prekey rotation have no event.
// The engine runs all three in turn and stops them with the process; the supervisor keeps no timer.

import { INTEGRATION_EVENT_TYPES, type IntegrationEvent } from '../../../domain/orchestration/chatsvc/events.ts';
import { defineReactor } from '../../../infra/processors/reactor.ts';
import type { BotSupervisor } from './supervisor.ts';

export const BOT_SUPERVISOR = 'chatsvc_bot_supervisor';

export const botSupervisorProcessor = (supervisor: BotSupervisor, passSecs: number) =>
  defineReactor<IntegrationEvent>({
    name: BOT_SUPERVISOR,
    handles: INTEGRATION_EVENT_TYPES,
    scope: 'each',
    afterProjections: true,
    reconcile: () => supervisor.pass(true),
    react: () => supervisor.pass(false),
    every: { ms: passSecs * 1000, run: () => supervisor.pass(true) },
  });
