// The agent-chat slice's application layer (the only caller of the command runner for it): the
// chat pipeline, one turn of a conversation with an agent profile, in the spec's order, for every
// chat surface (public, private, the personal assistant, a spawned agent, the chat-service bot),
// and each route's surface (publicTurn, privateTurn, assistantTurn: which profiles it may invoke).
//
//   per-client limit → per-profile rate_limit_rpm / rate_limit_rpd (per profile and caller)
//   → input cap → prompt-injection check → PII scrub on input → daily cost cap → grounding
//   → model call → leak detection → PII scrub on output → the turn recorded
//
// A surface says who the caller is, which profiles it may invoke (its refusals: 404, 403), who
// owns the conversation and which conversation the caller named; everything else is here.
// Refusals are security events in the audit log: a prompt injection, a rate-limit hit (at most
// one per limiter key a minute, so a flood cannot flood the log), a cost-cap block, and a leak
// (the reply is replaced by a fixed refusal; the original is neither stored nor returned).

import { randomUUID } from 'node:crypto';
import { canaryFor } from '../../../crypto/canary.ts';
import { conversationDecider, type ConversationState } from '../../../domain/orchestration/agent-chat/decider.ts';
import {
  EXCERPT_CHARS,
  type ConversationKind,
  type ConversationOwner,
  type TurnTokens,
  type ChatLimit,
  type ChatSecurityEvent,
  type ChatSurface,
} from '../../../domain/orchestration/agent-chat/events.ts';
import { conversationStream, auditStream } from '../../../domain/orchestration/streams.ts';
import { detectInjection } from '../../../domain/orchestration/agent-chat/injection.ts';
import { detectLeak, LEAK_REFUSAL, PromptFingerprint } from '../../../domain/orchestration/agent-chat/leak.ts';
import { auditExcerpt, scrubPii } from '../../../domain/orchestration/agent-chat/pii.ts';
import { systemPrompt, type Grounding } from '../../../domain/orchestration/agent-chat/prompt.ts';
import { charCount } from '../../../domain/orchestration/knowledge/decisions.ts';
import type { ChatsvcAuditEvent } from '../../../domain/orchestration/chatsvc/events.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import {
  ModelError,
  type ChatMessage,
  type ModelCall,
  type ToolCall,
  type ToolSpec,
} from '../../../infra/llm/index.ts';
import type { RateRule } from '../../../infra/rate-limit/index.ts';
import {
  conversationState,
  conversationWithContext,
  costOnDay,
  ownerCostOnDay,
} from '../../../projections/orchestration/agent-chat.ts';
import { GROUNDING_HITS, searchKnowledge } from '../../../projections/orchestration/knowledge.ts';
import { PERSONAL_ASSISTANT_SLUG } from '../../../domain/orchestration/profiles/decider.ts';
import type { ProfileRow } from '../../../projections/orchestration/profiles.ts';
import { profileNotFound } from '../profiles/commands.ts';
import { ApiError, rateLimited } from '../../shared/http-errors.ts';
import type { OrchDeps } from '../deps.ts';

export type PipelineDeps = Pick<OrchDeps, 'commands' | 'db' | 'clock' | 'log' | 'limiter' | 'models' | 'sealKey'>;

/** Stored messages sent as context with each turn (spec: Limits, public chat context). */
export const CONTEXT_MESSAGES = 10;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export interface TurnRequest {
  surface: ChatSurface;
  kind: ConversationKind;
  /** The public route's per-client limit, counted before anything else (even before the profile is looked up). */
  clientLimit: { key: string; rule: RateRule } | null;
  /** The caller as the per-profile limits count it and audit details name it (a client address key, an account id). */
  caller: string;
  /** The profile this surface may invoke, or the surface's refusal (thrown). */
  profile: () => Promise<ProfileRow>;
  owner: ConversationOwner;
  visitorId: string | null;
  /** The conversation the caller named (null: start one). */
  conversationId: string | null;
  message: string;
  maxChars: number;
  context: CommandContext;
  /** Where a new conversation starts (default: a random id). The chat-service bot derives it (rule 4). */
  newConversationId?: () => string;
  /** A daily cost cap of this caller alone (the chat-service bot's per-user cap), beside the profile's. */
  ownerCostCap?: number;
  /** Tools offered to the model (the tool loop, at most MAX_ITERATIONS model calls), or the function deciding them for the profile. */
  tools?: TurnTools | ((profile: ProfileRow) => Promise<TurnTools | null>);
}

/** The agent runtime's tool loop: at most this many model calls per turn (spec: Limits). */
export const MAX_ITERATIONS = 10;

export interface TurnTools {
  specs: ToolSpec[];
  /** Runs one call; what it returns (or the error's message) goes back to the model as the result. */
  execute(call: ToolCall): Promise<string>;
}

export interface TurnResult {
  conversation_id: string;
  message: string;
  tokens: TurnTokens;
  cost_cents: number;
  /** True when this turn started the conversation. */
  started: boolean;
}

// Per-profile prompt fingerprints and canaries, rebuilt when the profile changes.
const FINGERPRINTS_KEPT = 256;
const fingerprints = new Map<string, { key: string; fingerprint: PromptFingerprint }>();

function fingerprintOf(profile: ProfileRow): PromptFingerprint {
  const key = `${profile.updated_at.getTime()}`;
  const cached = fingerprints.get(profile.id);
  if (cached?.key === key) return cached.fingerprint;
  const fingerprint = new PromptFingerprint(profile.system_prompt);
  fingerprints.delete(profile.id);
  fingerprints.set(profile.id, { key, fingerprint });
  if (fingerprints.size > FINGERPRINTS_KEPT) fingerprints.delete(fingerprints.keys().next().value!);
  return fingerprint;
}

const utcDay = (at: Date) => at.toISOString().slice(0, 10);

async function audit(
  deps: PipelineDeps,
  event: ChatSecurityEvent | ChatsvcAuditEvent,
  context: CommandContext,
): Promise<void> {
  await deps.commands.record(auditStream(randomUUID()), event, context);
}

/** Count a hit against one limit; a refusal is a 429 and (coalesced) a `rate_limit_hit` audit entry. */
async function limit(
  deps: PipelineDeps,
  request: TurnRequest,
  profile: ProfileRow | null,
  which: ChatLimit,
  key: string,
  rule: RateRule,
): Promise<void> {
  const decision = await deps.limiter.consume(key, rule);
  if (decision.allowed) return;
  // At most one audit entry per limiter key a minute: the limiter itself keeps that count.
  if ((await deps.limiter.consume(`audit:${key}`, { limit: 1, windowMs: MINUTE_MS })).allowed) {
    await audit(
      deps,
      {
        type: 'ChatRateLimitExceeded',
        data: {
          profile_id: profile?.id ?? null,
          profile_slug: profile?.slug ?? null,
          surface: request.surface,
          client: request.caller,
          limit: which,
          retry_after: decision.retryAfterSeconds,
          at: deps.clock.now().toISOString(),
        },
      },
      request.context,
    );
  }
  throw rateLimited(
    decision.retryAfterSeconds,
    which === 'client_rpm'
      ? 'too many chat requests from this client'
      : "this profile's rate limit is reached for this caller",
  );
}

interface ConversationPlan {
  id: string;
  start: { follows: string | null } | null;
  history: ChatMessage[];
  /** The conversation's state as its read model shows it, for the turn's append (see CommandRunner.run `known`). */
  known: { state: ConversationState; revision: bigint | 'no_stream' };
}

/**
 * The conversation a turn continues, or a new one: the named conversation counts only when it
 * is this profile's, this surface's, this owner's (and this visitor_id's); anything else is
 * silently ignored and a new one starts. Past its expiry, a new one starts that follows it.
 */
async function planConversation(
  deps: PipelineDeps,
  request: TurnRequest,
  profile: ProfileRow,
  now: Date,
): Promise<ConversationPlan> {
  // The row and its context in one read; the context is used only when the conversation is the caller's.
  const named = request.conversationId
    ? await conversationWithContext(deps.db, request.conversationId, CONTEXT_MESSAGES)
    : null;
  const mine =
    named &&
    named.profile_id === profile.id &&
    named.kind === request.kind &&
    named.owner_kind === request.owner.kind &&
    named.owner_id === request.owner.id &&
    (named.visitor_id ?? null) === request.visitorId;
  const fresh = { state: conversationDecider.initialState(), revision: 'no_stream' as const };
  if (!mine) {
    // A derived id (the chat-service bot's) that is already taken by someone else's conversation starts a random one.
    const id = !named && request.newConversationId ? request.newConversationId() : randomUUID();
    return { id, start: { follows: null }, history: [], known: fresh };
  }
  if (named.expires_at.getTime() < now.getTime())
    return { id: randomUUID(), start: { follows: named.id }, history: [], known: fresh };
  return {
    id: named.id,
    start: null,
    history: named.context.map((m) => ({ role: m.role, content: m.content })),
    known: conversationState(named),
  };
}

/** Up to GROUNDING_HITS snippets above the floor; a retrieval error degrades to no grounding. */
async function ground(deps: PipelineDeps, profile: ProfileRow, message: string): Promise<Grounding> {
  if (!profile.knowledge_search_enabled) return { kind: 'off' };
  try {
    const hits = await searchKnowledge(deps.db, profile.id, message, GROUNDING_HITS);
    return hits.length
      ? { kind: 'snippets', snippets: hits.map((h) => ({ title: h.title, content: h.content })) }
      : { kind: 'none_found' };
  } catch (error) {
    deps.log.warn('grounding_failed', { profile: profile.slug, error: (error as Error).message });
    return { kind: 'off' };
  }
}

/** A model failure as the spec's 503s: `model_overloaded` (retryable, with Retry-After) or `model_unavailable`. */
export function modelFailure(error: ModelError): ApiError {
  if (error.kind === 'overloaded') {
    const seconds = Math.max(1, error.retryAfterSeconds);
    return new ApiError(
      503,
      'model_overloaded',
      `the model is overloaded right now; retry in ${seconds} seconds`,
      { retry_after: seconds },
      { 'Retry-After': String(seconds) },
    );
  }
  return new ApiError(503, 'model_unavailable', 'the model provider is unavailable; try again later');
}

export async function runTurn(deps: PipelineDeps, request: TurnRequest): Promise<TurnResult> {
  // 1. Rate limits: the per-client one, then the profile's per-minute and per-day, per caller.
  if (request.clientLimit)
    await limit(deps, request, null, 'client_rpm', request.clientLimit.key, request.clientLimit.rule);
  const profile = await request.profile();
  const counter = `chat:${profile.id}:${request.caller}`;
  await limit(deps, request, profile, 'profile_rpm', `${counter}:rpm`, {
    limit: profile.rate_limit_rpm,
    windowMs: MINUTE_MS,
  });
  await limit(deps, request, profile, 'profile_rpd', `${counter}:rpd`, {
    limit: profile.rate_limit_rpd,
    windowMs: DAY_MS,
  });

  // 2. Input cap.
  if (charCount(request.message) > request.maxChars) {
    throw new ApiError(400, 'message_too_long', `message must be at most ${request.maxChars} characters`, {
      max_chars: request.maxChars,
    });
  }
  const now = deps.clock.now();
  const base = { profile_id: profile.id, profile_slug: profile.slug, surface: request.surface, client: request.caller };

  // 3. Prompt injection: refused before anything reaches the model.
  const patterns = detectInjection(request.message);
  if (patterns.length > 0) {
    await audit(
      deps,
      {
        type: 'PromptInjectionDetected',
        data: { ...base, patterns, excerpt: auditExcerpt(request.message, EXCERPT_CHARS), at: now.toISOString() },
      },
      request.context,
    );
    throw new ApiError(
      400,
      'prompt_injection_detected',
      'the message looks like a prompt injection and was not sent to the model',
    );
  }

  // 4. PII scrub on input: the model, the log and the read models see only the scrubbed text.
  const userMessage = profile.pii_scrub ? scrubPii(request.message) : request.message;

  // 5. Daily cost cap (UTC day); a model that cannot cost anything is never refused.
  if (deps.models.canSpend(profile.model)) {
    const spent = await costOnDay(deps.db, profile.id, utcDay(now));
    if (spent >= profile.cost_cap_daily_cents) {
      await audit(
        deps,
        {
          type: 'CostCapBlocked',
          data: { ...base, cost_today_cents: spent, cap_cents: profile.cost_cap_daily_cents, at: now.toISOString() },
        },
        request.context,
      );
      throw new ApiError(
        503,
        'cost_cap_reached',
        'this profile has reached its daily cost cap; try again tomorrow (UTC)',
      );
    }
    if (request.ownerCostCap !== undefined) {
      const mine = await ownerCostOnDay(deps.db, profile.id, request.owner.kind, request.owner.id, utcDay(now));
      if (mine >= request.ownerCostCap) {
        await audit(
          deps,
          {
            type: 'CostCapBlocked',
            data: { ...base, cost_today_cents: mine, cap_cents: request.ownerCostCap, at: now.toISOString() },
          },
          request.context,
        );
        throw new ApiError(
          503,
          'cost_cap_reached',
          "this caller has reached the profile's daily cost cap; try again tomorrow (UTC)",
        );
      }
    }
  }

  // 6. The conversation and its context, and grounding (independent reads, side by side).
  const [conversation, grounding] = await Promise.all([
    planConversation(deps, request, profile, now),
    ground(deps, profile, userMessage),
  ]);
  const canary = canaryFor(deps.sealKey, profile.id);

  // 7. The model call; with tools, the tool loop: model and tools alternate, at most
  // MAX_ITERATIONS model calls, each checked against the daily cost cap and counted in it.
  const system = systemPrompt(profile.system_prompt, grounding, canary);
  const hints = {
    persona: profile.name,
    grounding:
      grounding.kind === 'snippets'
        ? grounding.snippets
        : grounding.kind === 'none_found'
          ? ('none_found' as const)
          : undefined,
  };
  const tools = typeof request.tools === 'function' ? await request.tools(profile) : (request.tools ?? null);
  const messages: ChatMessage[] = [...conversation.history, { role: 'user', content: userMessage }];
  const loop = { model_calls: 0, tool_calls: 0, hit_cap: false, hit_max_iterations: false };
  const usage = { input: 0, output: 0, cache_read: 0 };
  let cost = 0;
  let call: ModelCall | null = null;
  for (;;) {
    if (loop.model_calls >= (tools ? MAX_ITERATIONS : 1)) {
      loop.hit_max_iterations = !!tools;
      break;
    }
    if (loop.model_calls > 0 && deps.models.canSpend(profile.model)) {
      const spent = await costOnDay(deps.db, profile.id, utcDay(now));
      if (spent + cost >= profile.cost_cap_daily_cents) {
        loop.hit_cap = true;
        break;
      }
    }
    try {
      call = await deps.models.complete({
        model: profile.model,
        system,
        messages,
        max_tokens: profile.max_tokens,
        temperature: profile.temperature,
        hints,
        ...(tools ? { tools: tools.specs } : {}),
      });
    } catch (error) {
      if (!(error instanceof ModelError)) throw error;
      deps.log.warn('model_call_failed', {
        profile: profile.slug,
        model: profile.model,
        kind: error.kind,
        error: error.message,
      });
      if (loop.model_calls > 0 && tools) await toolLoopAudit(deps, request, profile, loop, cost);
      throw modelFailure(error);
    }
    loop.model_calls += 1;
    cost += call.cost_cents;
    usage.input += call.usage.input;
    usage.output += call.usage.output;
    usage.cache_read += call.usage.cache_read;
    if (!tools || call.tool_calls.length === 0) break;
    messages.push({ role: 'assistant', content: call.text, tool_calls: call.tool_calls });
    for (const toolCall of call.tool_calls) {
      loop.tool_calls += 1;
      let result: string;
      try {
        result = await tools.execute(toolCall);
      } catch (error) {
        result = JSON.stringify({ ok: false, error: (error as Error).message });
      }
      messages.push({ role: 'tool', tool_call_id: toolCall.id, content: result });
    }
  }
  if (tools) await toolLoopAudit(deps, request, profile, loop, cost);
  const finalText =
    call && call.tool_calls.length === 0
      ? call.text
      : call?.text ||
        (loop.hit_cap
          ? 'I stopped: this profile reached its daily cost cap while using tools.'
          : 'I stopped after using my tools as many times as I may in one turn.');

  // 8. Leak detection, then PII scrub on output.
  const leak = detectLeak(finalText, fingerprintOf(profile), canary);
  let reply = leak ? LEAK_REFUSAL : finalText;
  if (profile.pii_scrub) reply = scrubPii(reply);

  // 9. The turn, recorded (read-your-writes: the next turn sees it as context).
  const at = deps.clock.now();
  const tokens = usage;
  await deps.commands.run(
    conversationStream(conversation.id),
    conversationDecider,
    {
      type: 'RecordTurn',
      conversation_id: conversation.id,
      profile_id: profile.id,
      profile_slug: profile.slug,
      start: conversation.start && {
        kind: request.kind,
        owner: request.owner,
        visitor_id: request.visitorId,
        follows: conversation.start.follows,
      },
      turn: {
        user_message_id: randomUUID(),
        reply_message_id: randomUUID(),
        user_message: userMessage,
        reply,
        model: profile.model,
        tokens,
        cost_cents: cost,
        grounding_hits: grounding.kind === 'snippets' ? grounding.snippets.length : 0,
        leak_blocked: leak !== null,
        expires_at: new Date(at.getTime() + profile.conversation_ttl_hours * HOUR_MS).toISOString(),
        at: at.toISOString(),
      },
    },
    request.context,
    { known: conversation.known },
  );
  if (leak) {
    await audit(
      deps,
      {
        type: 'PromptLeakDetected',
        data: {
          ...base,
          conversation_id: conversation.id,
          detector: leak,
          excerpt: auditExcerpt(request.message, EXCERPT_CHARS),
          at: at.toISOString(),
        },
      },
      request.context,
    );
  }
  return {
    conversation_id: conversation.id,
    message: reply,
    tokens,
    cost_cents: cost,
    started: conversation.start !== null,
  };
}

async function toolLoopAudit(
  deps: PipelineDeps,
  request: TurnRequest,
  profile: ProfileRow,
  loop: { model_calls: number; tool_calls: number; hit_cap: boolean; hit_max_iterations: boolean },
  cost: number,
): Promise<void> {
  await audit(
    deps,
    {
      type: 'ToolLoopCompleted',
      data: {
        profile_id: profile.id,
        profile_slug: profile.slug,
        surface: request.surface,
        tool_calls: loop.tool_calls,
        model_calls: loop.model_calls,
        cost_cents: cost,
        hit_cap: loop.hit_cap,
        hit_max_iterations: loop.hit_max_iterations,
        at: deps.clock.now().toISOString(),
      },
    },
    request.context,
  );
}

/** A route's turn: the request without its surface, kind and profile, which the surface decides. */
export type SurfaceTurn = Omit<TurnRequest, 'surface' | 'kind' | 'profile'>;
export type ChatDeps = PipelineDeps & Pick<OrchDeps, 'profiles'>;

/** An enabled profile by slug, else 404 `profile_not_found`. */
async function enabledProfile(deps: ChatDeps, slug: string): Promise<ProfileRow> {
  const profile = await deps.profiles.bySlug(slug);
  if (!profile || !profile.enabled) throw profileNotFound();
  return profile;
}

/** The public surface: enabled tier-1 profiles only; unknown, disabled and tier 2-3 answer alike (the tier is not revealed). */
export function publicTurn(deps: ChatDeps, slug: string, request: SurfaceTurn): Promise<TurnResult> {
  return runTurn(deps, {
    ...request,
    surface: 'public',
    kind: 'public',
    profile: async () => {
      const profile = await deps.profiles.bySlug(slug);
      if (!profile || !profile.enabled || profile.security_tier !== 1) throw profileNotFound();
      return profile;
    },
  });
}

/** The private surface (key or session): any enabled profile but the personal assistant (403 `personal_assistant_forbidden`). */
export function privateTurn(deps: ChatDeps, slug: string, request: SurfaceTurn): Promise<TurnResult> {
  return runTurn(deps, {
    ...request,
    surface: 'private',
    kind: 'private',
    profile: async () => {
      if (slug === PERSONAL_ASSISTANT_SLUG)
        throw new ApiError(
          403,
          'personal_assistant_forbidden',
          'the personal assistant is reached through POST /api/assistant-user/chat with a browser session',
        );
      return enabledProfile(deps, slug);
    },
  });
}

/** The personal assistant's surface (browser session). */
export function assistantTurn(deps: ChatDeps, request: SurfaceTurn): Promise<TurnResult> {
  return runTurn(deps, {
    ...request,
    surface: 'assistant',
    kind: 'assistant',
    profile: () => enabledProfile(deps, PERSONAL_ASSISTANT_SLUG),
  });
}
