// Bot knowledge (spec: "Bot knowledge"), under /api/v1/bots/{profile_id}/knowledge, where
// profile_id is the profile's uuid. Reads need a key (any role); writes need an admin, checked by
// the route itself whatever ORCH_ENFORCE_ADMIN_ROLE says. Snippets are events on their profile's
// stream (domain/orchestration/knowledge), found through the profile's slug. Each route has its
// web-UI mirror under /api/bots/{profile_id}/knowledge (browser sessions).

import { createRoute, z } from '@hono/zod-openapi';
import { listSnippets, searchKnowledge, type SnippetRow } from '../../../projections/orchestration/knowledge.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { actorOf, requireAdmin, requireKey } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { profileWithId } from '../profiles/commands.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';
import { addSnippet, deleteSnippet, snippetIn, updateSnippet } from './commands.ts';
import {
  CreateSnippetBody,
  ListQuery,
  PatchSnippetBody,
  ProfileIdParam,
  SearchHit,
  SearchQuery,
  Snippet,
  SnippetParams,
} from './schemas.ts';

const tags = ['bot knowledge'];
const BASE = '/api/v1/bots/{profile_id}/knowledge';
const WRITE_ERRORS = { ...AUTH_ERRORS, 403: 'admin role required' };
const NOT_FOUND = 'profile_not_found (unknown or malformed profile id)';
const SNIPPET_NOT_FOUND = 'profile_not_found, or snippet_not_found (also a snippet of another bot)';

export function snippetView(row: SnippetRow) {
  return {
    id: row.id,
    profile_id: row.profile_id,
    title: row.title,
    content: row.content,
    source: row.source ?? null,
    metadata: row.metadata ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function knowledgeRoutes(deps: OrchDeps) {
  const app = orchRouter();

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: BASE,
      tags,
      summary: "A bot's knowledge snippets, newest first",
      middleware: requireKey(),
      request: { params: ProfileIdParam, query: ListQuery },
      responses: {
        200: ok(z.array(Snippet), 'a bare array, newest first'),
        ...orchErrors({ ...AUTH_ERRORS, 404: NOT_FOUND }),
      },
    }),
    async (c) => {
      const profile = await profileWithId(deps, c.req.valid('param').profile_id);
      return c.json(
        (await listSnippets(deps.db, profile.id, c.req.valid('query').title_contains)).map(snippetView),
        200,
      );
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: BASE,
      tags,
      summary: 'Add a knowledge snippet (the first one turns knowledge_search_enabled on)',
      middleware: requireAdmin(true),
      request: { params: ProfileIdParam, body: jsonBody(CreateSnippetBody) },
      responses: {
        201: ok(Snippet, 'the new snippet'),
        ...orchErrors({ ...WRITE_ERRORS, 400: 'validation_failed', 404: NOT_FOUND, 413: 'payload_too_large' }),
      },
    }),
    async (c) => {
      const snippet = await addSnippet(deps, c.req.valid('param').profile_id, c.req.valid('json'), actorOf(c));
      return c.json(snippetView(snippet), 201);
    },
  );

  // Declared before /{id}, so `search` is never taken for a snippet id.
  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: `${BASE}/search`,
      tags,
      summary: 'Ranked knowledge search (the retrieval chat grounding uses)',
      description:
        "The query's words are ORed with English stemming; titles weigh more than content; hits below the relevance floor (score 0.075) are not returned. Any text is a safe query.",
      middleware: requireKey(),
      request: { params: ProfileIdParam, query: SearchQuery },
      responses: {
        200: ok(z.array(SearchHit), 'hits by relevance, descending'),
        ...orchErrors({ ...AUTH_ERRORS, 400: 'validation_failed (q missing or empty)', 404: NOT_FOUND }),
      },
    }),
    async (c) => {
      const profile = await profileWithId(deps, c.req.valid('param').profile_id);
      const { q, limit } = c.req.valid('query');
      const hits = await searchKnowledge(deps.db, profile.id, q!, limit);
      return c.json(
        hits.map((h) => ({ ...snippetView(h), score: h.score })),
        200,
      );
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: `${BASE}/{id}`,
      tags,
      summary: 'One knowledge snippet',
      middleware: requireKey(),
      request: { params: SnippetParams },
      responses: { 200: ok(Snippet, 'the snippet'), ...orchErrors({ ...AUTH_ERRORS, 404: SNIPPET_NOT_FOUND }) },
    }),
    async (c) => {
      const { profile_id, id } = c.req.valid('param');
      return c.json(snippetView(await snippetIn(deps, await profileWithId(deps, profile_id), id)), 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'patch',
      path: `${BASE}/{id}`,
      tags,
      summary: 'Change a snippet (fields not sent stay as they are)',
      middleware: requireAdmin(true),
      request: { params: SnippetParams, body: jsonBody(PatchSnippetBody) },
      responses: {
        200: ok(Snippet, 'the snippet as changed'),
        ...orchErrors({
          ...WRITE_ERRORS,
          400: 'validation_failed (unknown fields too)',
          404: SNIPPET_NOT_FOUND,
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => {
      const { profile_id, id } = c.req.valid('param');
      return c.json(snippetView(await updateSnippet(deps, profile_id, id, c.req.valid('json'), actorOf(c))), 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'delete',
      path: `${BASE}/{id}`,
      tags,
      summary: 'Delete a snippet',
      middleware: requireAdmin(true),
      request: { params: SnippetParams },
      responses: { 204: { description: 'deleted' }, ...orchErrors({ ...WRITE_ERRORS, 404: SNIPPET_NOT_FOUND }) },
    }),
    async (c) => {
      const { profile_id, id } = c.req.valid('param');
      await deleteSnippet(deps, profile_id, id, actorOf(c));
      return c.body(null, 204);
    },
  );

  return app;
}
