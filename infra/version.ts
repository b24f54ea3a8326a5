// The running version, from package.json: reported by the health routes and the cockpit.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './paths.ts';

export const version: string = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
