// Projects (spec: "Project", "Tasks, projects, agents"). Creating needs role user or higher and
// makes the caller the owner (an `owner_id` in the body is ignored); every signed-in caller reads
// every project, `repo_path` shown to admins only; changing one needs its owner or an admin.
// Each route is mirrored under `/api/projects...` for the web console's browser sessions.

import { createRoute, z } from '@hono/zod-openapi';
import { MAX_CONCURRENT } from '../../../domain/orchestration/projects/decider.ts';
import { listProjects, type ProjectRow } from '../../../projections/orchestration/projects.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageFields, pageQuery } from '../../shared/pagination.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireKey, requireRole, roleOf, signedIn } from '../auth/guards.ts';
import type { OrchEnv } from '../auth/principal.ts';
import type { OrchDeps } from '../deps.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';
import { createProject, projectOf, updateProject } from './commands.ts';
import type { Context } from 'hono';

const tags = ['projects'];
export const PROJECTS_PAGE = { defaultLimit: 50, maxLimit: 200 };

const name = z.string().trim().min(1).max(200).openapi({ example: 'website' });
const repoPath = z
  .string()
  .trim()
  .min(1)
  .max(4096)
  .nullable()
  .openapi({ description: "path of a git repository on the runner's host (agents get a worktree of it)" });
const maxConcurrent = z
  .int()
  .min(MAX_CONCURRENT.min)
  .max(MAX_CONCURRENT.max)
  .openapi({
    description: `agents of this project running at once; ${MAX_CONCURRENT.min}-${MAX_CONCURRENT.max} (default ${MAX_CONCURRENT.default})`,
  });

const CreateProjectBody = z
  .object({ name, repo_path: repoPath.optional(), max_concurrent_agents: maxConcurrent.optional() })
  .openapi('CreateProjectRequest');
const PatchProjectBody = z
  .object({ name: name.optional(), repo_path: repoPath.optional(), max_concurrent_agents: maxConcurrent.optional() })
  .openapi('PatchProjectRequest');

export const Project = z
  .object({
    id: z.uuid(),
    name: z.string(),
    repo_path: z.string().nullable().openapi({ description: 'admins only; null for everyone else' }),
    max_concurrent_agents: z.int(),
    owner_id: z.uuid(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Project');
const ProjectPage = z.object({ projects: z.array(Project), ...pageFields }).openapi('ProjectPage');
const IdParam = uuidParams('id');

const isAdmin = (c: Context<OrchEnv>) => roleOf(c.get('principal')) === 'admin';

function projectView(p: ProjectRow, admin: boolean) {
  return {
    id: p.id,
    name: p.name,
    repo_path: admin ? p.repo_path : null,
    max_concurrent_agents: p.max_concurrent_agents,
    owner_id: p.owner_id,
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
  };
}

export function projectRoutes(deps: OrchDeps) {
  const app = orchRouter();

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/projects',
      tags,
      summary: 'Create a project owned by the caller',
      middleware: [requireRole('user')] as const,
      request: { body: jsonBody(CreateProjectBody) },
      responses: {
        201: ok(Project, 'the new project'),
        ...orchErrors({
          ...AUTH_ERRORS,
          400: 'validation_failed',
          403: 'insufficient_role (readonly)',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => {
      const project = await createProject(deps, signedIn(c), c.req.valid('json'), actorOf(c));
      return c.json(projectView(project, isAdmin(c)), 201);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/projects',
      tags,
      summary: 'Every project, oldest first',
      middleware: [requireKey()] as const,
      request: { query: pageQuery(PROJECTS_PAGE) },
      responses: { 200: ok(ProjectPage, 'a page of projects'), ...orchErrors(AUTH_ERRORS) },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const { rows, total } = await listProjects(deps.db, query.limit, query.offset);
      const admin = isAdmin(c);
      return c.json(
        page(
          'projects',
          rows.map((p) => projectView(p, admin)),
          total,
          query,
        ),
        200,
      );
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/projects/{id}',
      tags,
      summary: 'One project',
      middleware: [requireKey()] as const,
      request: { params: IdParam },
      responses: { 200: ok(Project, 'the project'), ...orchErrors({ ...AUTH_ERRORS, 404: 'project_not_found' }) },
    }),
    async (c) => {
      return c.json(projectView(await projectOf(deps, c.req.valid('param').id), isAdmin(c)), 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'patch',
      path: '/api/v1/projects/{id}',
      tags,
      summary: 'Change a project (its owner or an admin)',
      middleware: [requireRole('user')] as const,
      request: { params: IdParam, body: jsonBody(PatchProjectBody) },
      responses: {
        200: ok(Project, 'the project as changed'),
        ...orchErrors({
          ...AUTH_ERRORS,
          400: 'validation_failed',
          403: 'insufficient_role, or project_owner_required',
          404: 'project_not_found',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => {
      const project = await updateProject(deps, signedIn(c), c.req.valid('param').id, c.req.valid('json'), actorOf(c));
      return c.json(projectView(project, isAdmin(c)), 200);
    },
  );

  return app;
}
