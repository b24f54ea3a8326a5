// The generated authorisation matrix: every operation of a service's OpenAPI document (each
// states who may call it as `x-access`, see api/shared/route-policy.ts) × every kind of
// principal, each cell one in-process request. What a rule admits is written here, once per
// service, apart from the code that enforces it, so the matrix is an independent check:
//
// - a principal the route's rules do not all admit must be refused (401 or 403);
// - a principal they admit must not be (any other answer: the requests name no existing
//   resource and carry an empty body, so a 400, 404, 409 or 422 is the route going on to its own
//   checks).
//
// A route with no `x-access`, or with a rule this table does not know, is reported before any
// request is sent: a route cannot ship without its rule.

import { randomUUID } from 'node:crypto';
import { http, type Reply } from './services.ts';

/** What the matrix knows of a principal, for the rules to decide on. */
export interface Traits {
  signedIn: boolean;
  role?: 'readonly' | 'user' | 'admin';
  /** A browser session (password or forward-auth sign-in), not a bearer key. */
  session?: boolean;
  /** The runner's service principal. */
  runner?: boolean;
  /** An API key (an account's, the runner's or an agent's). */
  apiKey?: boolean;
  /** Scopes of a token that carries them (a bot token, a machine token). */
  scopes?: string[];
}

export interface MatrixPrincipal {
  name: string;
  traits: Traits;
  headers(): Record<string, string>;
}

/** Rule name → which principals it admits (on this operation: some rules let a reader read, not write). */
export type RuleTable = Record<string, (t: Traits, op: Operation) => boolean>;

export interface Operation {
  method: string;
  /** The document's path template (`/api/v1/tasks/{id}`). */
  path: string;
  rules: string[] | undefined;
  tags: string[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

type Paths = Record<string, Record<string, { 'x-access'?: string[]; tags?: string[] }>>;

/** The operations of an OpenAPI document (`app.getOpenAPI31Document(...)`). */
export function operationsOf(document: { paths?: unknown }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.includes(method))
        ops.push({ method: method.toUpperCase(), path, rules: op['x-access'], tags: op.tags ?? [] });
    }
  }
  return ops;
}

export const opName = (op: Pick<Operation, 'method' | 'path'>) => `${op.method} ${op.path}`;

/** Operations that state no rule, or a rule `table` does not know: what the matrix cannot check. */
export function undeclared(ops: Operation[], table: RuleTable): string[] {
  return ops.flatMap((op) => {
    if (!op.rules?.length) return [`${opName(op)}: no access rule`];
    const unknown = op.rules.filter((r) => !(r in table));
    return unknown.length ? [`${opName(op)}: rule ${unknown.join(', ')} is not in the matrix's table`] : [];
  });
}

export const admitted = (op: Operation, traits: Traits, table: RuleTable) =>
  (op.rules ?? []).every((rule) => table[rule]!(traits, op));

/** An id no resource has: a UUID for every parameter (the parameter's own check refuses other forms after the access rule). */
const NOWHERE = '00000000-0000-4000-8000-0000000ab5e7';

export function concretePath(template: string): string {
  return template.replace(/\{[^}]+\}/g, NOWHERE);
}

export interface Cell {
  op: Operation;
  principal: MatrixPrincipal;
  reply: Reply;
}

export interface MatrixOptions {
  origin: string;
  ops: Operation[];
  principals: MatrixPrincipal[];
  table: RuleTable;
  /** Operations each principal calls after its others (ending its own session). */
  last?: (op: Operation) => boolean;
  /** What a cell must answer instead of the rule's verdict (a socket route's plain GET). */
  fixed?: (op: Operation) => number | undefined;
}

const refused = (status: number) => status === 401 || status === 403;

/** Every cell, its reply against its rule; the mismatches, one line each (empty: the matrix holds). */
export async function runMatrix(options: MatrixOptions): Promise<{ cells: number; mismatches: string[] }> {
  const { origin, principals, table } = options;
  const ordered = [
    ...options.ops.filter((op) => !options.last?.(op)),
    ...options.ops.filter((op) => options.last?.(op)),
  ];
  const mismatches: string[] = [];
  let cells = 0;
  for (const principal of principals) {
    for (const op of ordered) {
      const withBody = op.method !== 'GET' && op.method !== 'DELETE';
      const reply = await http(`${origin}${concretePath(op.path)}`, {
        method: op.method,
        headers: { ...principal.headers(), 'x-request-id': randomUUID() },
        ...(withBody ? { json: {} } : {}),
      });
      cells++;
      const fixed = options.fixed?.(op);
      const admits = admitted(op, principal.traits, table);
      const ok = fixed !== undefined ? reply.status === fixed : admits ? !refused(reply.status) : refused(reply.status);
      if (!ok) {
        const want = fixed !== undefined ? String(fixed) : admits ? 'not 401/403' : '401 or 403';
        mismatches.push(
          `${principal.name} × ${opName(op)} [${(op.rules ?? []).join(' + ')}]: ${reply.status} ${reply.text.slice(0, 120)} (want ${want})`,
        );
      }
    }
  }
  return { cells, mismatches };
}
