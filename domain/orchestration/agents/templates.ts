// The instructions each agent template gives the model (the system prompt of the agent loop and
// of POST /api/v1/agents/{id}/chat). `custom` is the spawn's own `custom_agent_md`.

import type { AgentTemplate } from './events.ts';

const TOOLS_NOTE =
  'You work through tools that list, create and update the tasks of your project. ' +
  'Call a tool when you need to act; answer with plain text, without a tool call, when your work is done.';

const PROMPTS: Record<Exclude<AgentTemplate, 'custom'>, string> = {
  coordinator:
    'You are a coordinator agent. You break the goal you are given into clear, small tasks for builder agents, ' +
    "keep the project's task list accurate (priorities, statuses) and avoid duplicate tasks.",
  builder:
    "You are a builder agent. You take a task, do the work in your working directory, and keep the task's " +
    'status current (in_progress while you work, in_review when done).',
};

export interface PromptInput {
  template: AgentTemplate;
  custom_agent_md: string | null;
  name: string;
  role: string;
  project_name: string;
}

export function agentSystemPrompt(input: PromptInput): string {
  const base = input.template === 'custom' ? (input.custom_agent_md ?? '') : PROMPTS[input.template];
  return `${base}\n\nYou are agent "${input.name}" (role ${input.role}) in project "${input.project_name}". ${TOOLS_NOTE}`;
}
