// The project's runtime import graph, for the layout rules: which module loads which when it is
// imported. Parsed with the TypeScript compiler (not a pattern), so only what survives
// compilation counts: with `verbatimModuleSyntax`, `import type` and `export type` are erased,
// while `import { type X }` still loads its module. Dynamic `import()` is left out: it loads
// later, on demand, so it cannot close a cycle at load time.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript5';
import { filesUnder } from './files.ts';

/** Module (path from the root, `/`-separated) → the project modules it loads at import time. */
export type ImportGraph = Map<string, string[]>;

export async function runtimeImportGraph(root: string, folders: string[]): Promise<ImportGraph> {
  const graph: ImportGraph = new Map();
  for (const folder of folders) {
    for (const full of await filesUnder(path.join(root, folder), '.ts')) {
      if (full.endsWith('.d.ts')) continue;
      const file = path.relative(root, full).split(path.sep).join('/');
      const targets = runtimeImportsOf(file, await readFile(full, 'utf8'))
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => path.posix.join(path.posix.dirname(file), specifier));
      graph.set(file, targets);
    }
  }
  return graph;
}

/**
 * The specifiers a module loads at import time: its imports and re-exports but the type-only
 * ones (`import type`, `export type`). `import { type A }` counts: `verbatimModuleSyntax` keeps it
 * as `import {} from`, which still loads the module.
 */
export function runtimeImportsOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      if (!statement.importClause?.isTypeOnly) specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly)
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
  }
  return specifiers;
}

/** Every import cycle (a strongly connected group of two or more modules, or a module importing itself), each sorted. */
export function importCycles(graph: ImportGraph): string[][] {
  // Tarjan's algorithm, iterative: the graph has hundreds of modules and deep chains.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next);
    next++;
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = (graph.get(frame.node) ?? []).filter((t) => graph.has(t));
      if (frame.edge < edges.length) {
        const target = edges[frame.edge++]!;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next);
          next++;
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const group: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          group.push(member);
        } while (member !== frame.node);
        if (group.length > 1 || (graph.get(frame.node) ?? []).includes(frame.node)) cycles.push(group.sort());
      }
    }
  }
  return cycles;
}
