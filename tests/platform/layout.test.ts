// The layout holds (DESIGN.md "Layout"): dependencies point one way, main → api → projections →
// infra → domain / crypto. A test reads every source file's imports, so a wrong-way import fails
// here rather than in review.

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { filesUnder } from '../support/files.ts';
import { importCycles, runtimeImportGraph, runtimeImportsOf } from '../support/import-graph.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What each top-level folder may import from the others. */
const ALLOWED: Record<string, string[]> = {
  main: ['api', 'projections', 'infra', 'domain', 'crypto'],
  api: ['projections', 'infra', 'domain', 'crypto'],
  projections: ['infra', 'domain'],
  infra: ['domain', 'crypto'],
  domain: [],
  crypto: [],
};

const test = suite('layout: dependencies point one way');

test('no folder imports one it must not (infra never imports api, projections or main)', async () => {
  const wrong: string[] = [];
  for (const [folder, allowed] of Object.entries(ALLOWED)) {
    for (const file of await filesUnder(path.join(ROOT, folder), '.ts')) {
      const text = await readFile(file, 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
        const target = path.relative(ROOT, path.resolve(path.dirname(file), specifier!)).split(path.sep)[0]!;
        if (target !== folder && target in ALLOWED && !allowed.includes(target))
          wrong.push(`${path.relative(ROOT, file)} imports ${specifier}`);
      }
    }
  }
  assert.equal(wrong, []);
});

test('the check sees imports (it would fail on a wrong-way one)', async () => {
  // infra/db/migrate.ts imports './pool.ts'; make sure the pattern matches real import lines.
  const text = await readFile(path.join(ROOT, 'infra/db/migrate.ts'), 'utf8');
  assert.ok([...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].length > 0);
});

test('every slice has one name in three roots: a domain folder has its projection file and its api folder', async () => {
  for (const service of ['orchestration', 'registry', 'chat']) {
    for (const entry of await readdir(path.join(ROOT, 'domain', service), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const slice = entry.name;
      // A slice names its events; it has a decider unless its events go on another slice's stream
      // (knowledge snippets are decided by the profile stream's decider).
      const files = await readdir(path.join(ROOT, 'domain', service, slice));
      assert.ok(
        files.includes('decider.ts') || files.includes('events.ts'),
        `domain/${service}/${slice}/decider.ts or events.ts`,
      );
      assert.ok(
        (await readdir(path.join(ROOT, 'projections', service))).includes(`${slice}.ts`),
        `projections/${service}/${slice}.ts`,
      );
      assert.ok(
        (await readdir(path.join(ROOT, 'api', service, slice))).includes('routes.ts'),
        `api/${service}/${slice}/routes.ts`,
      );
    }
  }
});

/** A module's slice: its folder under domain/<service>/ (`domain/chat/meetings`), else its own folder. */
const sliceOf = (file: string) => {
  const parts = file.split('/');
  return parts[0] === 'domain' && parts.length > 3 ? parts.slice(0, 3).join('/') : path.posix.dirname(file);
};

/**
 * Imports of another slice's decider module by a slice's modules (DESIGN.md "Slices": deciders
 * never import each other; shared vocabulary lives in events). `graph` maps each module (path from
 * the repository root) to the modules it imports; `deciders` are the modules that define a
 * decider. Modules outside the slice folders (domain/shared/, the catalog domain/events.ts) are
 * not checked.
 */
export function crossSliceDeciderImports(graph: Map<string, string[]>, deciders: Set<string>): string[] {
  const wrong: string[] = [];
  for (const [file, imports] of graph) {
    if (!file.startsWith('domain/') || file.split('/').length < 4) continue;
    for (const target of imports) {
      if (deciders.has(target) && sliceOf(target) !== sliceOf(file)) wrong.push(`${file} imports ${target}`);
    }
  }
  return wrong;
}

/** domain/'s import graph, and which of its modules define a decider (`…: Decider<…> =`). */
async function domainModules(): Promise<{ graph: Map<string, string[]>; deciders: Set<string> }> {
  const graph = new Map<string, string[]>();
  const deciders = new Set<string>();
  for (const full of await filesUnder(path.join(ROOT, 'domain'), '.ts')) {
    const file = path.relative(ROOT, full).split(path.sep).join('/');
    const text = await readFile(full, 'utf8');
    if (/\)?:\s*Decider<[^=]*>\s*(=|\{)/.test(text)) deciders.add(file);
    graph.set(
      file,
      [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(([, specifier]) =>
        path.posix.join(path.posix.dirname(file), specifier!),
      ),
    );
  }
  return { graph, deciders };
}

test("deciders import no other slice's decider (one stream, one decider; vocabulary lives in events)", async () => {
  const { graph, deciders } = await domainModules();
  // The scan finds the deciders it guards: the profile stream's, and one outside decider.ts.
  assert.ok(deciders.has('domain/orchestration/profiles/decider.ts'));
  assert.ok(deciders.has('domain/chat/meetings/reminders.ts'));
  assert.ok(!deciders.has('domain/orchestration/knowledge/decisions.ts'));
  assert.equal(crossSliceDeciderImports(graph, deciders), []);
});

test("the decider rule catches a decider importing another slice's decider, and allows events and its own slice", () => {
  const deciders = new Set([
    'domain/orchestration/profiles/decider.ts',
    'domain/orchestration/knowledge/decider.ts',
    'domain/chat/keys/decider.ts',
    'domain/chat/keys/claim.ts',
  ]);
  const graph = new Map([
    [
      'domain/orchestration/profiles/decider.ts',
      ['domain/orchestration/knowledge/decider.ts', 'domain/orchestration/knowledge/events.ts'],
    ],
    ['domain/orchestration/chatsvc/rules.ts', ['domain/orchestration/profiles/decider.ts']],
    ['domain/chat/keys/decider.ts', ['domain/chat/keys/claim.ts', 'domain/shared/decider.ts']],
    [
      'api/orchestration/profiles/commands.ts',
      ['domain/orchestration/profiles/decider.ts', 'domain/orchestration/knowledge/decider.ts'],
    ],
    ['domain/events.ts', ['domain/chat/keys/claim.ts']],
  ]);
  assert.equal(crossSliceDeciderImports(graph, deciders), [
    'domain/orchestration/profiles/decider.ts imports domain/orchestration/knowledge/decider.ts',
    'domain/orchestration/chatsvc/rules.ts imports domain/orchestration/profiles/decider.ts',
  ]);
});

test('no runtime import cycle anywhere (a module loads before everything it imports)', async () => {
  const graph = await runtimeImportGraph(ROOT, ['main', 'api', 'projections', 'infra', 'domain', 'crypto', 'bench']);
  // The scan reads real imports: the composition root loads the apps.
  assert.ok(graph.get('main/serve.ts')?.includes('main/apps.ts'));
  assert.equal(importCycles(graph), []);
});

test('the cycle rule catches a cycle of two, a longer one and a self-import, and ignores a chain', () => {
  const graph = new Map([
    ['api/a/bot.ts', ['api/a/connector.ts']],
    ['api/a/connector.ts', ['api/a/bot.ts', 'infra/x.ts']],
    ['infra/x.ts', ['domain/y.ts']],
    ['domain/y.ts', []],
    ['api/b/one.ts', ['api/b/two.ts']],
    ['api/b/two.ts', ['api/b/three.ts']],
    ['api/b/three.ts', ['api/b/one.ts']],
    ['api/c/self.ts', ['api/c/self.ts']],
  ]);
  assert.equal(
    importCycles(graph).sort((a, b) => a[0]!.localeCompare(b[0]!)),
    [['api/a/bot.ts', 'api/a/connector.ts'], ['api/b/one.ts', 'api/b/three.ts', 'api/b/two.ts'], ['api/c/self.ts']],
  );
});

// The application layer (`commands.ts`) is the only caller of the command runner: a route module
// maps HTTP to commands and queries.

/**
 * Route modules (`routes.ts`, or any module that declares a route with `createRoute`: a slice's
 * login.ts, credential.ts, ...) that run commands themselves: a call of the runner's writing
 * methods, or a runtime import of infra/commands.ts.
 */
export function routesRunningCommands(modules: Map<string, string>): string[] {
  const wrong: string[] = [];
  for (const [file, text] of modules) {
    if (!file.endsWith('/routes.ts') && !/\bcreateRoute\(/.test(text)) continue;
    const calls = /\bcommands\s*\.\s*(run|record|runMany|runTogether)\s*\(/.test(text);
    const imports = runtimeImportsOf(file, text).some((specifier) => specifier.endsWith('infra/commands.ts'));
    if (calls || imports) wrong.push(file);
  }
  return wrong.sort();
}

test('no routes.ts runs commands: commands.ts is the only caller of the command runner', async () => {
  const modules = new Map<string, string>();
  for (const full of await filesUnder(path.join(ROOT, 'api'), '.ts'))
    modules.set(path.relative(ROOT, full).split(path.sep).join('/'), await readFile(full, 'utf8'));
  const wrong = routesRunningCommands(modules);
  assert.equal(wrong, [], 'routes running commands');
});

test('the routes rule catches a runner call and a runtime import, and allows `import type` and reads of the log', () => {
  const modules = new Map([
    ['api/x/a/routes.ts', 'app.openapi(r, async (c) => { await deps.commands.run(stream, decider, command, ctx); });'],
    ['api/x/b/routes.ts', "import { asDomainEvent } from '../../../infra/commands.ts';"],
    [
      'api/x/c/routes.ts',
      "import type { CommandContext } from '../../../infra/commands.ts';\nconst store = deps.commands.store;",
    ],
    ['api/x/d/routes.ts', "import { type CommandContext } from '../../../infra/commands.ts';"],
    ['api/x/c/commands.ts', 'await deps.commands.record(stream, event, ctx);'],
    [
      'api/x/e/login.ts',
      "const route = createRoute({ method: 'post', path: '/login' });\nawait deps.commands.run(stream, decider, command, ctx);",
    ],
    ['api/x/e/helpers.ts', 'await deps.commands.run(stream, decider, command, ctx);'],
  ]);
  // `import { type X }` still loads the module under verbatimModuleSyntax: a route says `import type`.
  assert.equal(routesRunningCommands(modules), [
    'api/x/a/routes.ts',
    'api/x/b/routes.ts',
    'api/x/d/routes.ts',
    'api/x/e/login.ts',
  ]);
});

// --- no background loop or timer under api/ outside a processor (issue 32) ------------------------
//
// What follows the log or runs on its own on behalf of the platform is a processor
// (infra/processors/engine.ts: projections, reactors, and reactors of scope `each` with a periodic
// pass), and a connection-bound ticker is infra/ticker.ts. So a module under api/:
// - never calls `setInterval` (a loop that runs by itself);
// - never `.unref()`s a timer unless it declares a processor (`defineReactor(` or
//   `defineProjection(`): unref is the mark of a timer nobody waits for or clears, i.e. a
//   background one. The timers left to api/ are awaited or cleared by what they serve: a
//   request's sleep or deadline, a socket's timeout or reconnect back-off (chatsvc/bot.ts, whose
//   sockets the supervisor's processor starts and stops), and they need no unref.
// Comments are not code: they are skipped.

/** The modules under api/ that start a background loop or timer (rule above). */
export function backgroundTimers(modules: Map<string, string>): string[] {
  const wrong: string[] = [];
  for (const [file, text] of modules) {
    if (!file.startsWith('api/')) continue;
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    const processor = /\bdefine(Reactor|Projection)\s*[<(]/.test(code);
    if (/\bsetInterval\s*\(/.test(code)) wrong.push(`${file}: setInterval`);
    if (!processor && /\.unref\s*\(\s*\)/.test(code))
      wrong.push(`${file}: an unref'd timer outside a processor module`);
  }
  return wrong.sort();
}

async function apiModules(): Promise<Map<string, string>> {
  const modules = new Map<string, string>();
  for (const full of await filesUnder(path.join(ROOT, 'api'), '.ts'))
    modules.set(path.relative(ROOT, full).split(path.sep).join('/'), await readFile(full, 'utf8'));
  return modules;
}

test("no module under api/ starts a background loop or timer: no setInterval, no unref'd timer outside a processor", async () => {
  const modules = await apiModules();
  // The scan reads the real modules: the supervisor's processor and a request-bound sleep are there.
  assert.ok(modules.has('api/orchestration/chatsvc/reactor.ts'));
  assert.equal(backgroundTimers(modules), []);
});

test("the timer rule catches setInterval and a background unref'd timer, and allows a sleep, a deadline, a socket timeout and a processor", () => {
  const modules = new Map([
    [
      'api/x/a/loop.ts',
      'export function start() { const timer = setInterval(() => void sweep(), 1000); timer.unref(); }',
    ],
    [
      'api/x/b/poller.ts',
      'setTimeout(function again() { void poll(); setTimeout(again, 5000).unref(); }, 5000).unref();',
    ],
    ['api/x/c/interval.ts', 'const t = setInterval(beat, 10_000);'],
    [
      'api/x/d/routes.ts',
      'await new Promise((r) => setTimeout(r, ms));\nconst deadline = setTimeout(() => controller.abort(), 10_000);\ntry { await work(controller.signal); } finally { clearTimeout(deadline); }',
    ],
    [
      'api/x/e/socket.ts',
      "const idle = setTimeout(() => ws.close(4000, 'idle'), 30_000);\nws.on('close', () => clearTimeout(idle));",
    ],
    [
      'api/x/f/reactor.ts',
      "export const r = defineReactor<E>({ name: 'r', handles: ['E'], async react() { setTimeout(wake, 10).unref(); } });",
    ],
    [
      'api/x/g/notes.ts',
      '// Not setInterval(...) nor timer.unref(): a comment is no timer.\n/* setInterval(x) */ export const ok = 1;',
    ],
    ['infra/x/ticker.ts', 'this.timer = setInterval(tick, ms); this.timer.unref();'],
  ]);
  assert.equal(backgroundTimers(modules), [
    "api/x/a/loop.ts: an unref'd timer outside a processor module",
    'api/x/a/loop.ts: setInterval',
    "api/x/b/poller.ts: an unref'd timer outside a processor module",
    'api/x/c/interval.ts: setInterval',
  ]);
});

/**
 * The processor names the modules declare (`defineProjection(…{ name: … })`, `defineReactor(…)`),
 * a constant resolved within its module: each name once, or the engine would refuse the second
 * registration at start (infra/processors/engine.ts `register`; tests/infra/projections.test.ts).
 */
export function processorNames(modules: Map<string, string>): { file: string; name: string }[] {
  const found: { file: string; name: string }[] = [];
  for (const [file, text] of modules) {
    for (const match of text.matchAll(
      /\bdefine(?:Reactor|Projection)\s*(?:<[^>]*>)?\s*\(\s*\{\s*name:\s*(?:'([^']+)'|([A-Za-z_][\w]*))/g,
    )) {
      const constant = match[2] ? new RegExp(`\\bconst\\s+${match[2]}\\s*=\\s*'([^']+)'`).exec(text)?.[1] : undefined;
      found.push({ file, name: match[1] ?? constant ?? `${file}#${match[2]}` });
    }
  }
  return found;
}

test('every processor has its own name across the composition (registered once: the engine refuses a second)', async () => {
  const modules = new Map<string, string>();
  for (const folder of ['api', 'projections', 'infra']) {
    for (const full of await filesUnder(path.join(ROOT, folder), '.ts'))
      modules.set(path.relative(ROOT, full).split(path.sep).join('/'), await readFile(full, 'utf8'));
  }
  const found = processorNames(modules);
  const names = found.map((f) => f.name);
  for (const known of [
    'users',
    'chatsvc_integrations',
    'web_push_sender',
    'scheduled_message_poster',
    'chatsvc_bot_supervisor',
    'write_gate',
  ]) {
    assert.ok(names.includes(known), `the scan finds ${known}`);
  }
  assert.equal(
    names.filter((n, i) => names.indexOf(n) !== i),
    [],
    'processor names declared twice',
  );
});

test('the name rule resolves a constant and finds a name declared twice', () => {
  const found = processorNames(
    new Map([
      ['api/a/reactor.ts', "export const A = 'a';\nexport const r = defineReactor<E>({\n  name: A, handles: [] });"],
      [
        'projections/b.ts',
        "export const p = defineProjection<E>({ name: 'b', handles: [] });\nexport const q = defineProjection({ name: 'a' });",
      ],
    ]),
  );
  assert.equal(
    found.map((f) => f.name),
    ['a', 'b', 'a'],
  );
});

test.run();
