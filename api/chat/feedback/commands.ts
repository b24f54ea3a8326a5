// Feedback's use cases: submit (stored locally first, then mirrored to the issue tracker when one
// is configured) and triage. The slice's application layer and the only caller of the command
// runner for it: each function records the feedback stream's events and reads the row back.

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { FeedbackEvent, FeedbackStatus } from '../../../domain/chat/admin/events.ts';
import { feedbackStream } from '../../../domain/chat/streams.ts';
import { putBlob } from '../../../infra/blobs.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { feedbackById, type FeedbackRow } from '../../../projections/chat/admin.ts';
import { ApiError } from '../../shared/http-errors.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'config' | 'log'>;

export const SCREENSHOT_MAX_BYTES = 5 * 1024 * 1024;
/** How long the tracker may take before the row is kept unmirrored. */
export const TRACKER_TIMEOUT_MS = 10_000;

/** The host an issue's `instance:<host>` label names: CHATSVC_PUBLIC_URL's, else this machine's. */
function instanceHost(publicUrl: string): string {
  try {
    if (publicUrl) return new URL(publicUrl).host;
  } catch {
    /* not a URL: fall back */
  }
  return hostname();
}

/** Open the issue; true when the tracker took it. Never throws. */
async function mirror(
  deps: Deps,
  row: { id: string; description: string; has_screenshot: boolean; username: string },
): Promise<boolean> {
  const tracker = deps.config.feedbackTracker;
  if (!tracker) return false;
  const host = instanceHost(deps.config.publicUrl);
  try {
    const res = await fetch(`${tracker.baseUrl}/repos/${tracker.repo}/issues`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tracker.token}`,
        accept: 'application/vnd.github+json',
        'content-type': 'application/json',
        'user-agent': 'orchard-chat',
      },
      body: JSON.stringify({
        title: `Feedback: ${row.description.split('\n')[0]!.slice(0, 80)}`,
        body: `${row.description}\n\n---\nfeedback ${row.id} from ${row.username} on ${host}${row.has_screenshot ? ' (a screenshot is stored on the instance)' : ''}`,
        labels: [`instance:${host}`],
      }),
      signal: AbortSignal.timeout(TRACKER_TIMEOUT_MS),
    });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) deps.log.warn('feedback_mirror_failed', { feedback_id: row.id, status: res.status });
    return res.ok;
  } catch (error) {
    deps.log.warn('feedback_mirror_failed', { feedback_id: row.id, error: (error as Error).message });
    return false;
  }
}

export interface SubmitFeedback {
  user_id: string;
  username: string;
  description: string;
  screenshot?: { data: string; mime_type: string };
}

/** Stores the feedback (and its screenshot, at most 5 MB decoded), then mirrors it; a failed mirror keeps the row. */
export async function submitFeedback(deps: Deps, input: SubmitFeedback, context: CommandContext): Promise<FeedbackRow> {
  let screenshot: { blob: string; mime_type: string; bytes: number } | null = null;
  if (input.screenshot) {
    const bytes = Buffer.from(input.screenshot.data, 'base64').length;
    if (bytes > SCREENSHOT_MAX_BYTES) throw new ApiError(400, 'screenshot_too_large', 'the screenshot is over 5 MB');
    screenshot = { blob: await putBlob(deps.db, input.screenshot.data), mime_type: input.screenshot.mime_type, bytes };
  }
  const id = randomUUID();
  const submitted: FeedbackEvent = {
    type: 'FeedbackSubmitted',
    data: {
      feedback_id: id,
      user_id: input.user_id,
      description: input.description,
      screenshot,
      at: deps.clock.now().toISOString(),
    },
  };
  await deps.commands.record(feedbackStream(id), submitted, context);
  if (
    await mirror(deps, {
      id,
      description: input.description,
      has_screenshot: screenshot !== null,
      username: input.username,
    })
  ) {
    const tracker = deps.config.feedbackTracker!;
    const forwarded: FeedbackEvent = {
      type: 'FeedbackForwarded',
      data: { feedback_id: id, target: `${tracker.baseUrl}/repos/${tracker.repo}`, at: deps.clock.now().toISOString() },
    };
    await deps.commands.record(feedbackStream(id), forwarded, context);
  }
  return (await feedbackById(deps.db, id))!;
}

/** Sets a feedback item's status (404 `feedback_not_found` otherwise). */
export async function triageFeedback(
  deps: Deps,
  input: { feedback_id: string; user_id: string; status: FeedbackStatus },
  context: CommandContext,
): Promise<FeedbackRow> {
  const row = await feedbackById(deps.db, input.feedback_id);
  if (!row) throw new ApiError(404, 'feedback_not_found', 'no such feedback');
  const event: FeedbackEvent = {
    type: 'FeedbackStatusChanged',
    data: { feedback_id: row.id, status: input.status, by: input.user_id, at: deps.clock.now().toISOString() },
  };
  await deps.commands.record(feedbackStream(row.id), event, context);
  return (await feedbackById(deps.db, row.id))!;
}
