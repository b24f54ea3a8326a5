// The scheduled-message poster: a reactor (infra/processors/reactor.ts: one process at a time,
// catch-up then live, the checkpoint moved after each batch) that turns each
// `ScheduledMessageDelivered` (appended by the firing in ./fire.ts) into the message itself.
//
// Idempotent by event id: the message of a delivery is `MessagePosted` on
// `chat.message-<the scheduled id>`, appended with `no_stream`, so a batch handed over again (a
// crash after the appends, before the checkpoint) only meets conflicts, which `runMany` decides
// again as `message_exists`: each delivery is posted once.

import type { ScheduledEvent } from '../../../domain/chat/scheduled/events.ts';
import { messageDecider } from '../../../domain/chat/messages/decider.ts';
import { messageStream } from '../../../domain/chat/streams.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { defineReactor, type Reactor } from '../../../infra/processors/reactor.ts';
import { SCHEDULER_ACTOR, type FireDeps } from './fire.ts';

type Delivered = Extract<ScheduledEvent, { type: 'ScheduledMessageDelivered' }>;

export function scheduledMessagePoster(deps: Pick<FireDeps, 'commands'>): Reactor {
  return defineReactor<Delivered>({
    name: 'scheduled_message_poster',
    handles: ['ScheduledMessageDelivered'],
    // The batch's messages are appended together (`runMany`, one log transaction where the store allows).
    async react(events) {
      const seen = new Set<string>();
      const items = events.flatMap((event) => {
        const d = event.data;
        if (seen.has(d.scheduled_message_id)) return []; // one message per id, whatever the log holds
        seen.add(d.scheduled_message_id);
        return [
          {
            stream: messageStream(d.scheduled_message_id),
            command: {
              type: 'Post' as const,
              message_id: d.scheduled_message_id,
              channel_id: d.channel_id,
              sender_id: d.sender_id,
              ciphertext: d.ciphertext,
              kind: 'text' as const,
              thread_root_id: d.thread_root_id,
              mentions: d.mentions,
              via_webhook: false,
              has_file: d.file_ids.length > 0,
              file_ids: d.file_ids,
              scheduled_for: d.scheduled_for,
              at: d.at,
            },
            context: { ...SCHEDULER_ACTOR, causationId: event.id },
            known: { state: messageDecider.initialState(), revision: 'no_stream' as const },
          },
        ];
      });
      for (const outcome of await deps.commands.runMany(messageDecider, items, { awaitProjections: false })) {
        // Posted already (the batch was handed over again): once is enough.
        if (!outcome.ok && !(outcome.error instanceof DomainError && outcome.error.code === 'message_exists'))
          throw outcome.error;
      }
    },
  });
}
