#!/usr/bin/env node
// The `orchard` command: loads the TypeScript sources through tsx and runs the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../main/cli.ts');
