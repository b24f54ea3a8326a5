// The configuration's sections, in the order the reference and `orchard config` show them.

import { chatVars } from './chat.ts';
import type { EnvVars } from './kinds.ts';
import { llmVars } from './llm.ts';
import { orchestrationVars } from './orchestration.ts';
import { platformVars } from './platform.ts';
import { registryVars } from './registry.ts';
import { runnerVars } from './runner.ts';
import { updatesVars } from './updates.ts';

export interface Section {
  title: string;
  vars: EnvVars;
}

export const SECTIONS: readonly Section[] = [
  { title: 'Platform', vars: platformVars },
  { title: 'Orchestration', vars: orchestrationVars },
  { title: 'Chat', vars: chatVars },
  { title: 'Registry', vars: registryVars },
  { title: 'Updates', vars: updatesVars },
  { title: 'Runner', vars: runnerVars },
  { title: 'Model providers', vars: llmVars },
];

/** Every variable of every section, for one parse of the whole environment. */
export const ALL_VARS = {
  ...platformVars,
  ...orchestrationVars,
  ...chatVars,
  ...registryVars,
  ...updatesVars,
  ...runnerVars,
  ...llmVars,
};
