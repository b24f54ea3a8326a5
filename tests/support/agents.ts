// Spawned agents for route suites: a project, an agent spawned in it, and the agent's own key,
// which only the runner ever receives (the suite claims the agent with the runner's key).
// Servers for these suites take the admin key from a file, so the runner principal registers.

import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { http, startTestApps, startTestServices, type TestServices } from './services.ts';

export interface AgentKeys {
  adminKey: string;
  runnerKey: string;
}

/** The in-process apps (or, with `sockets`, the real services) with an admin key (from a file) and a runner key. */
export async function startAgentApps(
  label: string,
  env: Record<string, string> = {},
  options: { sockets?: boolean } = {},
): Promise<{ s: TestServices; keys: AgentKeys }> {
  const keys = { adminKey: `orch_${label}-admin-${randomUUID()}`, runnerKey: `orch_${label}-runner-${randomUUID()}` };
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-agents-'));
  const file = path.join(dir, 'admin.key');
  await writeFile(file, `${keys.adminKey}\n`, { mode: 0o600 });
  const start = options.sockets ? startTestServices : startTestApps;
  const s = await start(label, { ADMIN_API_KEY_FILE: file, ORCH_RUNNER_API_KEY: keys.runnerKey, ...env });
  return { s, keys };
}

export async function createProject(s: TestServices, key: string, body: Record<string, unknown> = {}): Promise<string> {
  const r = await http(`${s.orch}/api/v1/projects`, {
    headers: { 'X-API-Key': key },
    json: { name: `p-${randomUUID().slice(0, 8)}`, ...body },
  });
  if (r.status !== 201) throw new Error(`create project: ${r.status} ${r.text}`);
  return r.body.id;
}

export async function spawn(
  s: TestServices,
  key: string,
  projectId: string,
  body: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const r = await http(`${s.orch}/api/v1/spawn`, {
    headers: { 'X-API-Key': key },
    json: { name: `a-${randomUUID().slice(0, 8)}`, role: 'builder', project_id: projectId, ...body },
  });
  if (r.status !== 201) throw new Error(`spawn: ${r.status} ${r.text}`);
  return r.body;
}

/** Claim as the runner until this agent comes up; its claim (credential included). */
export async function claimAgent(
  s: TestServices,
  runnerKey: string,
  agentId: string,
  instance = 'test-runner',
): Promise<Record<string, any>> {
  for (let i = 0; i < 100; i++) {
    const r = await http(`${s.orch}/api/v1/runner/claim`, {
      headers: { 'X-API-Key': runnerKey },
      json: { runner_instance: instance },
    });
    if (r.status !== 200) throw new Error(`claim: ${r.status} ${r.text}`);
    if (!r.body.agent) throw new Error(`agent ${agentId} was not claimable`);
    if (r.body.agent.id === agentId) return r.body;
  }
  throw new Error('claim: too many other agents');
}

/** A spawned agent and its own API key. */
export async function agentWithKey(
  s: TestServices,
  keys: AgentKeys,
  projectId: string,
): Promise<{ id: string; apiKey: string }> {
  const agent = await spawn(s, keys.adminKey, projectId);
  const claim = await claimAgent(s, keys.runnerKey, agent.id);
  return { id: agent.id, apiKey: claim.credential };
}
