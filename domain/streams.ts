// Every stream category of the platform: the four services' tables (domain/*/streams.ts).
// docs/reference/streams.md is generated from these (domain/streams-reference.ts).

import type { AnyStreamCategory, Service } from './shared/streams.ts';
import { CHAT_STREAMS } from './chat/streams.ts';
import { ORCH_STREAMS } from './orchestration/streams.ts';
import { REGISTRY_STREAMS } from './registry/streams.ts';
import { PLATFORM_STREAMS } from './updates/streams.ts';

export const STREAM_TABLES: Readonly<Record<Service, Readonly<Record<string, AnyStreamCategory>>>> = {
  orch: ORCH_STREAMS,
  chat: CHAT_STREAMS,
  registry: REGISTRY_STREAMS,
  platform: PLATFORM_STREAMS,
};

export const ALL_STREAM_CATEGORIES: readonly AnyStreamCategory[] = Object.values(STREAM_TABLES).flatMap((table) =>
  Object.values(table),
);

/** The declared category named `name`, or undefined. */
export const streamCategoryNamed = (name: string): AnyStreamCategory | undefined =>
  ALL_STREAM_CATEGORIES.find((c) => c.category === name);
