// The runner's HTTP client of the orchestration API: its own routes with the runner's key, and
// the task routes with each agent's own credential (so what an agent does is the agent's).

export interface ClaimedAgent {
  agent: {
    id: string;
    name: string;
    role: string;
    project_id: string;
    template: string;
    model: string;
    base_branch: string;
    persistent: boolean;
    status: string;
    initial_prompt: string | null;
  };
  system_prompt: string;
  credential: string;
  project: { id: string; name: string; repo_path: string | null };
  mcp_servers: {
    name: string;
    command: string;
    args: string[];
    env: Record<string, string>;
    description: string | null;
  }[];
}

export interface Reply {
  status: number;
  body: any;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly key: string,
  ) {}

  async request(method: string, path: string, options: { json?: unknown; key?: string } = {}): Promise<Reply> {
    const headers: Record<string, string> = { 'X-API-Key': options.key ?? this.key };
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
    });
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    return { status: res.status, body };
  }

  private async ok(method: string, path: string, json?: unknown): Promise<any> {
    const reply = await this.request(method, path, { json });
    if (reply.status !== 200) throw new ApiFailure(reply);
    return reply.body;
  }

  recover(instance: string): Promise<{ failed: string[] }> {
    return this.ok('POST', '/api/v1/runner/recover', { runner_instance: instance });
  }

  async claim(instance: string): Promise<ClaimedAgent | null> {
    const body = await this.ok('POST', '/api/v1/runner/claim', { runner_instance: instance });
    return body.agent ? (body as ClaimedAgent) : null;
  }

  /** The agent's status after the report; 409 (`agent_ended`: stopped or killed meanwhile) comes back as a status too. */
  async report(agentId: string, report: Record<string, unknown>): Promise<string> {
    const reply = await this.request('POST', `/api/v1/runner/agents/${agentId}/report`, { json: report });
    if (reply.status === 409) return reply.body?.status ?? 'ended';
    if (reply.status !== 200) throw new ApiFailure(reply);
    return reply.body.status;
  }

  async agentStatus(agentId: string): Promise<string> {
    return (await this.ok('GET', `/api/v1/agents/${agentId}`)).status;
  }
}

export class ApiFailure extends Error {
  constructor(readonly reply: Reply) {
    super(
      `orchestration API answered ${reply.status}: ${typeof reply.body === 'object' ? (reply.body?.message ?? reply.body?.error) : reply.body}`,
    );
    this.name = 'ApiFailure';
  }
}
