// What the chat routes may use (built by main/).

import type { ServiceDeps } from '../shared/deps.ts';

export interface ChatDeps extends ServiceDeps {
  startedAt: Date;
}
