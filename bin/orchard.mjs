#!/usr/bin/env node
// The `orchard` command. A release runs its precompiled JavaScript (dist/, made at release time
// by `orchard release bundle`); a working tree loads the TypeScript sources through tsx.
import { existsSync } from 'node:fs';

const bundled = new URL('../dist/cli.js', import.meta.url);
if (existsSync(bundled)) {
  await import(bundled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../main/cli.ts');
}
