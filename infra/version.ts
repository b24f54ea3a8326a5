// The running version, from package.json: reported by the health routes and the cockpit.

import { readFileSync } from 'node:fs';

export const version: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
