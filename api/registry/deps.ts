// What the registry routes may use (built by main/).

import type { ServiceDeps } from '../shared/deps.ts';

export type RegistryDeps = ServiceDeps;
