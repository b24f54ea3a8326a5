// compose.yaml, the Dockerfile and .dockerignore, checked without a Docker engine: the compose
// file is parsed with `yaml` and held against the platform's own configuration (ENV_VARS,
// parseListen) and CLI. Every check is a function returning a list of problems; each is run on
// the real files (no problems) and on mutated in-memory copies (the expected problem), so no
// check can pass vacuously.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { ENV_VARS, parseListen } from '../../infra/config.ts';
import type { ServiceName } from '../../main/apps.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// ---------------------------------------------------------------------------------------------
// The document, loosely typed: compose allows several shapes for most keys.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };
interface ComposeDoc {
  services: Record<string, Obj>;
  secrets?: Record<string, Obj>;
  [key: string]: Json | undefined;
}

const SERVICE_NAMES: readonly ServiceName[] = ['orch', 'chat', 'registry'];
const LISTEN_VAR: Record<ServiceName, string> = {
  orch: 'ORCH_LISTEN',
  chat: 'CHATSVC_LISTEN',
  registry: 'REGISTRY_LISTEN',
};
const LISTEN_VARS = new Set(Object.values(LISTEN_VAR));

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function loadCompose(text = readFileSync(path.join(root, 'compose.yaml'), 'utf8')): ComposeDoc {
  // Compose honours YAML merge keys (`<<: *anchor`); YAML 1.2 needs them turned on.
  const doc: unknown = parse(text, { merge: true });
  if (!isObj(doc) || !isObj(doc.services)) throw new Error('compose.yaml has no services map');
  return doc as unknown as ComposeDoc;
}

// Through JSON: YAML aliases (`depends_on: *orchard-depends`) come back as one shared object, and
// a mutation meant for one service must not reach the others.
const clone = (doc: ComposeDoc): ComposeDoc => JSON.parse(JSON.stringify(doc)) as ComposeDoc;

/** Services built from our Dockerfile; the rest run third-party images. */
function ours(doc: ComposeDoc): [string, Obj][] {
  return Object.entries(doc.services).filter(([, s]) => s.build !== undefined);
}
/** The runner (`orchard serve runner`): ours, but a client of orch with no database of its own. */
const isRunner = (service: Obj) => words(service.command)?.join(' ') === 'serve runner';
/** Ours that serve HTTP on the log and the database. */
function servers(doc: ComposeDoc): [string, Obj][] {
  return ours(doc).filter(([, s]) => !isRunner(s));
}
function theirs(doc: ComposeDoc): [string, Obj][] {
  return Object.entries(doc.services).filter(([, s]) => s.build === undefined);
}

/** `environment:` in map form (`KEY: value`, `KEY:` passes through) or list form (`KEY=value`, `KEY`). */
function environment(service: Obj): Map<string, string | null> {
  const env = new Map<string, string | null>();
  const raw = service.environment;
  if (raw === undefined || raw === null) return env;
  if (Array.isArray(raw)) {
    for (const entry of raw) {
      const text = String(entry);
      const eq = text.indexOf('=');
      env.set(eq === -1 ? text : text.slice(0, eq), eq === -1 ? null : text.slice(eq + 1));
    }
  } else if (isObj(raw)) {
    for (const [key, value] of Object.entries(raw)) env.set(key, value === null ? null : String(value));
  } else {
    throw new Error(`environment is neither a map nor a list: ${JSON.stringify(raw)}`);
  }
  return env;
}

/** Compose variable interpolation (`${VAR}`, `${VAR:?msg}`, `${VAR:-default}`) replaced by a placeholder. */
function interpolate(value: string): string {
  return value.replace(/\$\$/g, '$').replace(/\$\{[^}]*\}/g, 'placeholder');
}

function words(value: Json | undefined): string[] | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) return value.map(String);
  return String(value).trim().split(/\s+/);
}

// ---------------------------------------------------------------------------------------------
// Checks: each returns `<service>: <problem>` lines.

function envNameProblems(doc: ComposeDoc): string[] {
  const problems: string[] = [];
  for (const [name, service] of ours(doc)) {
    if (service.env_file !== undefined) problems.push(`${name}: env_file hides its variables from this check`);
    for (const key of environment(service).keys()) {
      if (!Object.hasOwn(ENV_VARS, key)) problems.push(`${name}: ${key} is not in ENV_VARS`);
    }
  }
  return problems;
}

/** A third-party image must name a version tag (or a digest): not untagged, not `latest`. */
function imageProblems(doc: ComposeDoc): string[] {
  const problems: string[] = [];
  for (const [name, service] of theirs(doc)) {
    const image = typeof service.image === 'string' ? service.image : '';
    if (!image) {
      problems.push(`${name}: no image and no build`);
      continue;
    }
    if (/@sha256:[0-9a-f]{64}$/.test(image)) continue;
    const last = image.slice(image.lastIndexOf('/') + 1); // a registry's :port is not a tag
    const colon = last.lastIndexOf(':');
    const tag = colon === -1 ? '' : last.slice(colon + 1);
    if (!tag) problems.push(`${name}: image ${image} is untagged`);
    else if (!/^v?\d+(\.\d+)*([-.][\w.]+)?$/.test(tag))
      problems.push(`${name}: image ${image} is not pinned to a version tag`);
  }
  return problems;
}

/** Dockerfile ENTRYPOINT (exec form) + the service's command must be `node bin/orchard.mjs serve <name>`. */
function commandProblems(doc: ComposeDoc, entrypoint: string[]): string[] {
  const problems: string[] = [];
  const served: string[] = [];
  for (const [name, service] of ours(doc)) {
    const build = service.build;
    const context = isObj(build) ? build.context : build;
    const dockerfile = isObj(build) ? (build.dockerfile ?? 'Dockerfile') : 'Dockerfile';
    if (context !== '.' || dockerfile !== 'Dockerfile') problems.push(`${name}: not built from ./Dockerfile`);
    const override = words(service.entrypoint);
    const argv = [...(override ?? entrypoint), ...(words(service.command) ?? [])];
    const [node, script, verb, which, ...rest] = argv;
    if (node !== 'node' || script !== 'bin/orchard.mjs') {
      problems.push(`${name}: does not run bin/orchard.mjs: ${argv.join(' ')}`);
    } else if (verb === 'serve' && (which === 'runner' || which === 'sidecar') && rest.length === 0) {
      served.push(which);
    } else if (verb !== 'serve' || rest.length > 0 || !SERVICE_NAMES.includes(which as ServiceName)) {
      problems.push(
        `${name}: command is not \`orchard serve <${SERVICE_NAMES.join('|')}>\`: ${argv.slice(2).join(' ')}`,
      );
    } else {
      served.push(which!);
    }
  }
  for (const wanted of [...SERVICE_NAMES, 'sidecar']) {
    const count = served.filter((s) => s === wanted).length;
    if (count !== 1) problems.push(`stack: ${count} services run \`orchard serve ${wanted}\` (want 1)`);
  }
  return problems;
}

/** Every service of ours on one log and one database: EventStoreDB without TLS, PostgreSQL. */
function connectionProblems(doc: ComposeDoc): string[] {
  const problems: string[] = [];
  const services = new Set(Object.keys(doc.services));
  const seen = { EVENTSTORE_URL: new Set<string>(), DATABASE_URL: new Set<string>() };
  for (const [name, service] of servers(doc)) {
    const env = environment(service);
    const esdb = env.get('EVENTSTORE_URL');
    if (!esdb) {
      problems.push(`${name}: EVENTSTORE_URL unset (its log would be PostgreSQL)`);
    } else {
      seen.EVENTSTORE_URL.add(esdb);
      let url: URL | null = null;
      try {
        url = new URL(esdb);
      } catch {
        problems.push(`${name}: EVENTSTORE_URL does not parse: ${esdb}`);
      }
      if (url) {
        if (url.protocol !== 'esdb:') problems.push(`${name}: EVENTSTORE_URL is not esdb://: ${esdb}`);
        if (url.searchParams.get('tls') !== 'false') problems.push(`${name}: EVENTSTORE_URL lacks tls=false: ${esdb}`);
        if (!services.has(url.hostname)) problems.push(`${name}: EVENTSTORE_URL host ${url.hostname} is not a service`);
        if (url.port !== '2113') problems.push(`${name}: EVENTSTORE_URL port is not 2113: ${esdb}`);
      }
    }
    const db = env.get('DATABASE_URL');
    if (!db) {
      problems.push(`${name}: DATABASE_URL unset (it would start an embedded server)`);
    } else {
      seen.DATABASE_URL.add(db);
      let url: URL | null = null;
      try {
        url = new URL(interpolate(db));
      } catch {
        problems.push(`${name}: DATABASE_URL does not parse: ${db}`);
      }
      if (url) {
        if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
          problems.push(`${name}: DATABASE_URL is not postgres://: ${db}`);
        if (!services.has(url.hostname)) problems.push(`${name}: DATABASE_URL host ${url.hostname} is not a service`);
      }
    }
  }
  for (const [key, values] of Object.entries(seen)) {
    if (values.size > 1) problems.push(`stack: services disagree on ${key}: ${[...values].join(', ')}`);
  }
  return problems;
}

interface Published {
  hostIp: string | null;
  published: string | null;
  target: number;
}

/** `ports:` short syntax (`[HOST_IP:][PUBLISHED:]TARGET[/PROTO]`, IPv6 in brackets) or long syntax. */
function publishedPorts(service: Obj): Published[] {
  const raw = service.ports;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new Error('ports is not a list');
  return raw.map((entry): Published => {
    if (isObj(entry)) {
      return {
        hostIp: typeof entry.host_ip === 'string' ? entry.host_ip : null,
        published: entry.published === undefined || entry.published === null ? null : String(entry.published),
        target: Number(entry.target),
      };
    }
    const text = String(entry).replace(/\/(tcp|udp|sctp)$/, '');
    const match = /^(?:(\[[^\]]+\]|[^:]+):)??(?:([\d-]*):)?([\d-]+)$/.exec(text);
    if (!match) throw new Error(`ports entry does not parse: ${text}`);
    const hostIp = match[1] ? match[1].replace(/^\[|\]$/g, '') : null;
    return { hostIp, published: match[2] || null, target: Number(match[3]) };
  });
}

/** Listen addresses parse; each service listens on all interfaces on the port it publishes. */
function listenProblems(doc: ComposeDoc): string[] {
  const problems: string[] = [];
  for (const [name, service] of ours(doc)) {
    const env = environment(service);
    for (const [key, value] of env) {
      if (!LISTEN_VARS.has(key)) continue;
      try {
        parseListen(value ?? '', ''); // no fallback: an empty value fails too
      } catch (error) {
        problems.push(`${name}: ${key}: ${(error as Error).message}`);
      }
    }
    const which = words(service.command)?.[1] as ServiceName | undefined;
    if (!which || !SERVICE_NAMES.includes(which)) continue; // commandProblems reports it
    const own = env.get(LISTEN_VAR[which]);
    if (!own) {
      problems.push(`${name}: ${LISTEN_VAR[which]} unset (the default listens on loopback inside the container)`);
      continue;
    }
    let address;
    try {
      address = parseListen(own, '');
    } catch {
      continue; // reported above
    }
    if (address.host !== '0.0.0.0' && address.host !== '::') {
      problems.push(`${name}: ${LISTEN_VAR[which]} listens on ${address.host}, unreachable from outside the container`);
    }
    const targets = publishedPorts(service).map((p) => p.target);
    if (!targets.includes(address.port))
      problems.push(`${name}: listens on ${address.port} but publishes ${targets.join(', ') || 'nothing'}`);
  }
  return problems;
}

function portProblems(doc: ComposeDoc): string[] {
  const problems: string[] = [];
  for (const [name, service] of Object.entries(doc.services)) {
    if (service.network_mode === 'host')
      problems.push(`${name}: network_mode host publishes every port on every interface`);
    let ports: Published[];
    try {
      ports = publishedPorts(service);
    } catch (error) {
      problems.push(`${name}: ${(error as Error).message}`);
      continue;
    }
    for (const port of ports) {
      if (port.hostIp !== '127.0.0.1')
        problems.push(`${name}: port ${port.target} published on ${port.hostIp ?? 'every interface'}`);
    }
  }
  return problems;
}

function dependsProblems(doc: ComposeDoc): string[] {
  const problems: string[] = [];
  const services = doc.services;
  for (const [name, service] of Object.entries(services)) {
    const raw = service.depends_on;
    const deps: [string, string | null][] = Array.isArray(raw)
      ? raw.map((d) => [String(d), null])
      : isObj(raw)
        ? Object.entries(raw).map(([d, v]) => [d, isObj(v) && typeof v.condition === 'string' ? v.condition : null])
        : [];
    for (const [target, condition] of deps) {
      const dep = services[target];
      if (!dep) problems.push(`${name}: depends on ${target}, which is not a service`);
      else if (condition === 'service_healthy' && !isObj(dep.healthcheck))
        problems.push(`${name}: waits for ${target} to be healthy, which has no healthcheck`);
    }
    if (service.build !== undefined && !isRunner(service)) {
      // Ours wait for the log and the database to answer, not merely to start.
      for (const required of ['eventstore', 'postgres', 'redis']) {
        if (!deps.some(([d, c]) => d === required && c === 'service_healthy')) {
          problems.push(`${name}: does not wait for ${required} with condition service_healthy`);
        }
      }
    }
  }
  return problems;
}

/**
 * The runner: one service, no database or log of its own (it talks HTTP to orch), its server
 * URL naming the orch service on the port orch listens on, its key set, waiting for orch to be
 * healthy, publishing nothing.
 */
function runnerProblems(doc: ComposeDoc): string[] {
  const runners = ours(doc).filter(([, s]) => isRunner(s));
  if (runners.length !== 1) return [`stack: ${runners.length} services run \`orchard serve runner\` (want 1)`];
  const [name, service] = runners[0]!;
  const problems: string[] = [];
  const env = environment(service);
  for (const key of ['DATABASE_URL', 'EVENTSTORE_URL'])
    if (env.has(key)) problems.push(`${name}: sets ${key}, but the runner has no database access`);
  if (!env.get('ORCH_RUNNER_API_KEY')) problems.push(`${name}: ORCH_RUNNER_API_KEY unset`);
  const orch = doc.services.orch
    ? parseListen(String(environment(doc.services.orch).get('ORCH_LISTEN') ?? ''), '0.0.0.0:8585')
    : null;
  let url: URL | null = null;
  try {
    url = new URL(String(env.get('ORCH_RUNNER_SERVER_URL')));
  } catch {
    problems.push(`${name}: ORCH_RUNNER_SERVER_URL does not parse`);
  }
  if (url && (url.hostname !== 'orch' || Number(url.port) !== orch?.port))
    problems.push(`${name}: ORCH_RUNNER_SERVER_URL does not name orch on its port: ${url}`);
  const deps = isObj(service.depends_on) ? service.depends_on : {};
  if (!isObj(deps.orch) || deps.orch.condition !== 'service_healthy')
    problems.push(`${name}: does not wait for orch with condition service_healthy`);
  if (publishedPorts(service).length) problems.push(`${name}: publishes ports`);
  return problems;
}

/** `*_FILE` variables name a compose secret the service mounts, backed by a file under ./secrets/. */
function secretProblems(doc: ComposeDoc): string[] {
  const problems: string[] = [];
  const declared = doc.secrets ?? {};
  for (const [name, service] of ours(doc)) {
    const mounted = new Map<string, string>(); // path in the container -> secret name
    const list = Array.isArray(service.secrets) ? service.secrets : [];
    for (const entry of list) {
      const source = isObj(entry) ? String(entry.source) : String(entry);
      const target = isObj(entry) && typeof entry.target === 'string' ? entry.target : source;
      mounted.set(target.startsWith('/') ? target : `/run/secrets/${target}`, source);
      const decl = declared[source];
      if (!decl) problems.push(`${name}: secret ${source} is not declared`);
      else if (typeof decl.file !== 'string' || !/^\.\/secrets\/[\w.-]+$/.test(decl.file))
        problems.push(`${name}: secret ${source} is not a file under ./secrets/`);
    }
    for (const [key, value] of environment(service)) {
      if (!key.endsWith('_FILE')) continue;
      if (!value || !mounted.has(value))
        problems.push(`${name}: ${key}=${value} is not a secret mounted in the service`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The Dockerfile.

function dockerInstructions(text: string): { op: string; args: string }[] {
  return text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const space = line.search(/\s/);
      return { op: line.slice(0, space).toUpperCase(), args: line.slice(space + 1).trim() };
    });
}

function dockerEntrypoint(text: string): string[] {
  const entries = dockerInstructions(text).filter((i) => i.op === 'ENTRYPOINT');
  const last = entries.at(-1);
  if (!last) throw new Error('Dockerfile has no ENTRYPOINT');
  let parsed: unknown;
  try {
    parsed = JSON.parse(last.args);
  } catch {
    parsed = null;
  }
  // Exec form only: the shell form runs under /bin/sh -c, which does not pass SIGTERM on.
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string'))
    throw new Error(`ENTRYPOINT is not in exec form (a JSON list of strings): ${last.args}`);
  return parsed;
}

function dockerfileProblems(text: string): string[] {
  const problems: string[] = [];
  const steps = dockerInstructions(text);
  let entrypoint: string[] = [];
  try {
    entrypoint = dockerEntrypoint(text);
  } catch (error) {
    problems.push(`Dockerfile: ${(error as Error).message}`);
  }
  if (
    entrypoint.length &&
    (entrypoint[0] !== 'node' || entrypoint[1] !== 'bin/orchard.mjs' || entrypoint.length !== 2)
  ) {
    problems.push(`Dockerfile: ENTRYPOINT is not node bin/orchard.mjs: ${JSON.stringify(entrypoint)}`);
  }
  const script = entrypoint[1];
  if (script && !existsSync(path.join(root, script)))
    problems.push(`Dockerfile: ENTRYPOINT runs ${script}, which does not exist`);
  const from = steps.find((s) => s.op === 'FROM')?.args ?? '';
  if (!/^node:20\.\d+(\.\d+)?-slim(\s|$)/.test(from))
    problems.push(`Dockerfile: base image is not node:20.<minor>-slim: ${from}`);
  if (!steps.some((s) => s.op === 'RUN' && /\bnpm ci\b.*--omit=dev/.test(s.args)))
    problems.push('Dockerfile: no `npm ci --omit=dev`');
  const users = steps.filter((s) => s.op === 'USER');
  if (users.at(-1)?.args !== 'node') problems.push('Dockerfile: does not run as USER node');
  return problems;
}

// ---------------------------------------------------------------------------------------------

function expectProblem(problems: string[], fragment: string): void {
  assert.ok(
    problems.some((p) => p.includes(fragment)),
    `expected a problem containing "${fragment}", got ${JSON.stringify(problems)}`,
  );
}

const test = suite('compose.yaml and Dockerfile');
const dockerfileText = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
const entrypoint = dockerEntrypoint(dockerfileText);
const doc = loadCompose();

test('the stack has eventstore, postgres, redis, the three services of ours, the runner and the updater sidecar', () => {
  assert.equal(
    ours(doc)
      .map(([n]) => n)
      .sort(),
    ['chat', 'orch', 'registry', 'runner', 'updater'],
  );
  assert.equal(
    theirs(doc)
      .map(([n]) => n)
      .sort(),
    ['eventstore', 'postgres', 'redis'],
  );
});

test('every environment variable of our services is in ENV_VARS', () => {
  assert.equal(envNameProblems(doc), []);
  assert.ok(environment(doc.services.orch!).has('ORCH_LISTEN'), 'merge keys resolved');

  const typo = clone(doc);
  (typo.services.orch!.environment as Obj).ORCH_LISTN = '0.0.0.0:8585';
  expectProblem(envNameProblems(typo), 'orch: ORCH_LISTN is not in ENV_VARS');

  // The list form: the real variables pass, a stray one does not.
  const list = clone(doc);
  const chat = list.services.chat!;
  chat.environment = [...environment(chat)].map(([k, v]) => (v === null ? k : `${k}=${v}`));
  assert.equal(envNameProblems(list), []);
  (chat.environment as string[]).push('CHAT_LISTEN=0.0.0.0:8600', 'NODE_OPTIONS');
  const problems = envNameProblems(list);
  expectProblem(problems, 'chat: CHAT_LISTEN is not in ENV_VARS');
  expectProblem(problems, 'chat: NODE_OPTIONS is not in ENV_VARS');

  const envFile = clone(doc);
  envFile.services.registry!.env_file = '.env';
  expectProblem(envNameProblems(envFile), 'registry: env_file');
});

test('the EventStoreDB node runs single, insecure, without projections', () => {
  const env = environment(doc.services.eventstore!);
  assert.is(env.get('EVENTSTORE_INSECURE'), 'true');
  assert.is(env.get('EVENTSTORE_RUN_PROJECTIONS'), 'None');
  assert.is(env.get('EVENTSTORE_CLUSTER_SIZE'), '1');
});

test('third-party images are pinned to a version tag', () => {
  assert.equal(imageProblems(doc), []);
  for (const [image, fragment] of [
    ['eventstore/eventstore:latest', 'not pinned'],
    ['eventstore/eventstore', 'untagged'],
    ['registry.example:5000/postgres', 'untagged'],
    ['postgres:alpine', 'not pinned'],
  ] as const) {
    const bad = clone(doc);
    bad.services.postgres!.image = image;
    expectProblem(imageProblems(bad), `postgres: image ${image} is ${fragment}`);
  }
  const digest = clone(doc);
  digest.services.postgres!.image = `postgres@sha256:${'a'.repeat(64)}`;
  assert.equal(imageProblems(digest), []);
});

test('each service of ours runs `orchard serve <orch|chat|registry>`', () => {
  assert.equal(entrypoint, ['node', 'bin/orchard.mjs']);
  assert.equal(commandProblems(doc, entrypoint), []);

  const all = clone(doc);
  all.services.orch!.command = ['serve', 'all'];
  const problems = commandProblems(all, entrypoint);
  expectProblem(problems, 'orch: command is not');
  expectProblem(problems, 'stack: 0 services run `orchard serve orch`');

  const typo = clone(doc);
  typo.services.chat!.command = 'serve chats'; // string form
  expectProblem(commandProblems(typo, entrypoint), 'chat: command is not');

  const shell = clone(doc);
  shell.services.registry!.entrypoint = ['sh', '-c'];
  expectProblem(commandProblems(shell, entrypoint), 'registry: does not run bin/orchard.mjs');

  const twice = clone(doc);
  twice.services.chat!.command = 'serve registry';
  expectProblem(commandProblems(twice, entrypoint), 'stack: 2 services run `orchard serve registry`');

  const elsewhere = clone(doc);
  elsewhere.services.orch!.build = { context: '.', dockerfile: 'Dockerfile.dev' };
  expectProblem(commandProblems(elsewhere, entrypoint), 'orch: not built from ./Dockerfile');
});

test('the runner talks HTTP to orch with its own key, with no database, once orch is healthy', () => {
  assert.equal(runnerProblems(doc), []);
  const cases: [(d: ComposeDoc) => void, string][] = [
    [
      (d) => {
        (d.services.runner!.environment as Obj).DATABASE_URL = 'postgres://x@postgres/x';
      },
      'runner: sets DATABASE_URL',
    ],
    [
      (d) => {
        delete (d.services.runner!.environment as Obj).ORCH_RUNNER_API_KEY;
      },
      'runner: ORCH_RUNNER_API_KEY unset',
    ],
    [
      (d) => {
        (d.services.runner!.environment as Obj).ORCH_RUNNER_SERVER_URL = 'http://chat:8585';
      },
      'runner: ORCH_RUNNER_SERVER_URL does not name orch',
    ],
    [
      (d) => {
        d.services.runner!.depends_on = ['orch'];
      },
      'runner: does not wait for orch',
    ],
    [
      (d) => {
        d.services.runner!.ports = ['127.0.0.1:9000:9000'];
      },
      'runner: publishes ports',
    ],
    [
      (d) => {
        delete d.services.runner;
      },
      'stack: 0 services run `orchard serve runner`',
    ],
  ];
  for (const [mutate, fragment] of cases) {
    const bad = clone(doc);
    mutate(bad);
    expectProblem(runnerProblems(bad), fragment);
  }
});

test('EVENTSTORE_URL is esdb:// with tls=false; DATABASE_URL is PostgreSQL; one of each', () => {
  assert.equal(connectionProblems(doc), []);
  const setEnv = (d: ComposeDoc, service: string, key: string, value: string | undefined) => {
    const env = d.services[service]!.environment as Obj;
    if (value === undefined) delete env[key];
    else env[key] = value;
  };
  const cases: [string, string | undefined, string][] = [
    ['EVENTSTORE_URL', 'esdb://eventstore:2113', 'orch: EVENTSTORE_URL lacks tls=false'],
    ['EVENTSTORE_URL', 'esdb://eventstore:2113?tls=true', 'orch: EVENTSTORE_URL lacks tls=false'],
    ['EVENTSTORE_URL', 'http://eventstore:2113?tls=false', 'orch: EVENTSTORE_URL is not esdb://'],
    ['EVENTSTORE_URL', 'esdb://esdb:2113?tls=false', 'orch: EVENTSTORE_URL host esdb is not a service'],
    ['EVENTSTORE_URL', 'esdb://eventstore:1113?tls=false', 'orch: EVENTSTORE_URL port is not 2113'],
    ['EVENTSTORE_URL', 'esdb//eventstore', 'orch: EVENTSTORE_URL does not parse'],
    ['EVENTSTORE_URL', undefined, 'orch: EVENTSTORE_URL unset'],
    ['DATABASE_URL', 'mysql://orchard@postgres/orchard', 'orch: DATABASE_URL is not postgres://'],
    ['DATABASE_URL', 'postgres://orchard@localhost/orchard', 'orch: DATABASE_URL host localhost is not a service'],
    ['DATABASE_URL', undefined, 'orch: DATABASE_URL unset'],
  ];
  for (const [key, value, fragment] of cases) {
    const bad = clone(doc);
    setEnv(bad, 'orch', key, value);
    expectProblem(connectionProblems(bad), fragment);
  }
  const split = clone(doc);
  setEnv(split, 'chat', 'DATABASE_URL', 'postgres://other@postgres:5432/other');
  expectProblem(connectionProblems(split), 'stack: services disagree on DATABASE_URL');
});

test('listen addresses parse with parseListen and match the published ports', () => {
  assert.equal(listenProblems(doc), []);
  for (const [value, fragment] of [
    ['localhost', 'orch: ORCH_LISTEN: expected a listen address'],
    ['', 'orch: ORCH_LISTEN: expected a listen address'],
    ['127.0.0.1:8585', 'orch: ORCH_LISTEN listens on 127.0.0.1'],
    ['0.0.0.0:9999', 'orch: listens on 9999 but publishes 8585'],
  ] as const) {
    const bad = clone(doc);
    (bad.services.orch!.environment as Obj).ORCH_LISTEN = value;
    expectProblem(listenProblems(bad), fragment);
  }
  const missing = clone(doc);
  delete (missing.services.registry!.environment as Obj).REGISTRY_LISTEN;
  expectProblem(listenProblems(missing), 'registry: REGISTRY_LISTEN unset');
});

test('ports are published on 127.0.0.1 only', () => {
  assert.equal(portProblems(doc), []);
  assert.ok(
    Object.values(doc.services).some((s) => publishedPorts(s).length > 0),
    'something is published',
  );
  assert.equal(publishedPorts({ ports: ['127.0.0.1:8585:8585/tcp', '[::1]:80:8080', 8400, '9000'] }), [
    { hostIp: '127.0.0.1', published: '8585', target: 8585 },
    { hostIp: '::1', published: '80', target: 8080 },
    { hostIp: null, published: null, target: 8400 },
    { hostIp: null, published: null, target: 9000 },
  ]);
  for (const [port, fragment] of [
    ['8585:8585', 'orch: port 8585 published on every interface'],
    ['0.0.0.0:8585:8585', 'orch: port 8585 published on 0.0.0.0'],
    [8585, 'orch: port 8585 published on every interface'],
    [{ target: 8585, published: 8585 }, 'orch: port 8585 published on every interface'],
    [{ target: 8585, published: 8585, host_ip: '0.0.0.0' }, 'orch: port 8585 published on 0.0.0.0'],
  ] as [Json, string][]) {
    const bad = clone(doc);
    bad.services.orch!.ports = [port];
    expectProblem(portProblems(bad), fragment);
  }
  const third = clone(doc);
  third.services.postgres!.ports = ['5432:5432'];
  expectProblem(portProblems(third), 'postgres: port 5432 published on every interface');
  const host = clone(doc);
  host.services.eventstore!.network_mode = 'host';
  expectProblem(portProblems(host), 'eventstore: network_mode host');
});

test('depends_on targets exist, and ours wait for healthy eventstore, postgres and redis', () => {
  assert.equal(dependsProblems(doc), []);
  const missing = clone(doc);
  (missing.services.orch!.depends_on as Obj).memcached = { condition: 'service_started' };
  expectProblem(dependsProblems(missing), 'orch: depends on memcached, which is not a service');

  const list = clone(doc);
  list.services.chat!.depends_on = ['eventstore', 'postgres', 'redis', 'nats'];
  const problems = dependsProblems(list);
  expectProblem(problems, 'chat: depends on nats, which is not a service');
  expectProblem(problems, 'chat: does not wait for eventstore with condition service_healthy');

  const started = clone(doc);
  ((started.services.registry!.depends_on as Obj).postgres as Obj).condition = 'service_started';
  expectProblem(dependsProblems(started), 'registry: does not wait for postgres');

  const unchecked = clone(doc);
  delete unchecked.services.postgres!.healthcheck;
  expectProblem(dependsProblems(unchecked), 'orch: waits for postgres to be healthy, which has no healthcheck');
});

test('*_FILE variables name compose secrets backed by files under ./secrets/', () => {
  assert.equal(secretProblems(doc), []);
  assert.is(environment(doc.services.orch!).get('ADMIN_API_KEY_FILE'), '/run/secrets/admin_api_key');
  for (const [name] of servers(doc)) {
    assert.is(
      environment(doc.services[name]!).get('ORCH_SECRET_KEY_FILE'),
      '/run/secrets/orch_secret_key',
      `${name} shares the sealing key`,
    );
  }

  const unmounted = clone(doc);
  (unmounted.services.chat!.environment as Obj).ADMIN_API_KEY_FILE = '/run/secrets/admin_api_key';
  expectProblem(
    secretProblems(unmounted),
    'chat: ADMIN_API_KEY_FILE=/run/secrets/admin_api_key is not a secret mounted',
  );

  const undeclared = clone(doc);
  delete undeclared.secrets!.admin_api_key;
  expectProblem(secretProblems(undeclared), 'orch: secret admin_api_key is not declared');

  const outside = clone(doc);
  outside.secrets!.admin_api_key = { file: '/etc/orchard/admin_key' };
  expectProblem(secretProblems(outside), 'orch: secret admin_api_key is not a file under ./secrets/');
});

test('the Dockerfile runs bin/orchard.mjs as node from node:20.<minor>-slim', () => {
  assert.equal(dockerfileProblems(dockerfileText), []);
  assert.ok(existsSync(path.join(root, 'bin/orchard.mjs')));
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  assert.is(path.normalize(pkg.bin.orchard!), path.normalize('bin/orchard.mjs'), 'the image runs the package bin');

  const swap = (from: RegExp, to: string) => {
    const mutated = dockerfileText.replace(from, to);
    assert.is.not(mutated, dockerfileText, `mutation ${from} applies`);
    return dockerfileProblems(mutated);
  };
  expectProblem(
    swap(/^ENTRYPOINT .*$/m, 'ENTRYPOINT ["node", "bin/missing.mjs"]'),
    'bin/missing.mjs, which does not exist',
  );
  expectProblem(
    swap(/^ENTRYPOINT .*$/m, 'ENTRYPOINT ["npx", "tsx", "infra/cli.ts"]'),
    'ENTRYPOINT is not node bin/orchard.mjs',
  );
  expectProblem(swap(/^ENTRYPOINT .*$/m, 'ENTRYPOINT node bin/orchard.mjs'), 'ENTRYPOINT is not in exec form');
  expectProblem(swap(/^ENTRYPOINT .*$/m, ''), 'Dockerfile has no ENTRYPOINT');
  expectProblem(swap(/^FROM .*$/m, 'FROM node:20-slim'), 'base image is not node:20.<minor>-slim');
  expectProblem(swap(/^FROM .*$/m, 'FROM node:latest'), 'base image is not node:20.<minor>-slim');
  expectProblem(swap(/--omit=dev/, ''), 'no `npm ci --omit=dev`');
  expectProblem(swap(/^USER node$/m, 'USER root'), 'does not run as USER node');
});

test('runtime dependencies suffice: tsx and esbuild are dependencies, typescript dev-only', () => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  assert.ok(pkg.dependencies.tsx, 'bin/orchard.mjs loads tsx at run time when the sources are not bundled');
  assert.ok(
    readFileSync(path.join(root, 'bin/orchard.mjs'), 'utf8').includes("'tsx/esm/api'"),
    'bin/orchard.mjs registers tsx',
  );
  // The image bundles its sources at build time (after `npm ci --omit=dev`).
  assert.ok(pkg.dependencies.esbuild, '`orchard release bundle` needs esbuild in the image');
  assert.match(
    readFileSync(path.join(root, 'Dockerfile'), 'utf8'),
    /^RUN node bin\/orchard\.mjs release bundle \/app$/m,
  );
  assert.not.ok(pkg.dependencies.typescript, 'typescript stays out of the image');
});

test('.dockerignore keeps host state, secrets, tests and bench out of the image', () => {
  const ignored = new Set(
    readFileSync(path.join(root, '.dockerignore'), 'utf8')
      .split(/\r?\n/)
      .map((l) => l.trim().replace(/^\/|\/$/g, ''))
      .filter((l) => l && !l.startsWith('#')),
  );
  for (const entry of ['node_modules', 'data', '.git', 'tests', 'bench', 'secrets', '.env']) {
    assert.ok(ignored.has(entry), `.dockerignore lists ${entry}`);
  }
});

test.run();
