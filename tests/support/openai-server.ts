// A local OpenAI-compatible Chat Completions server (a real HTTP server on loopback) whose answers
// a suite scripts: each request's body goes to `answer`, which returns the reply (status and
// JSON body), or `hang` to never answer. Requests are recorded.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Answer = { status?: number; headers?: Record<string, string>; body: unknown } | 'hang';

export interface OpenAiServer {
  /** Base URL, `/v1` included (the value of ORCH_LLM_BASE_URL). */
  url: string;
  requests: Record<string, any>[];
  close(): Promise<void>;
}

/** A completion with text, or with tool calls; usage included so the cost is known. */
export function completion(options: {
  text?: string;
  toolCalls?: { id: string; name: string; arguments: Record<string, unknown> }[];
  usage?: [number, number];
}) {
  const [prompt, completionTokens] = options.usage ?? [1000, 200];
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    model: 'test',
    choices: [
      {
        index: 0,
        finish_reason: options.toolCalls?.length ? 'tool_calls' : 'stop',
        message: {
          role: 'assistant',
          content: options.text ?? null,
          ...(options.toolCalls?.length
            ? {
                tool_calls: options.toolCalls.map((t) => ({
                  id: t.id,
                  type: 'function',
                  function: { name: t.name, arguments: JSON.stringify(t.arguments) },
                })),
              }
            : {}),
        },
      },
    ],
    usage: { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens },
  };
}

export async function startOpenAiServer(answer: (body: Record<string, any>) => Answer): Promise<OpenAiServer> {
  const requests: Record<string, any>[] = [];
  const hanging: ServerResponse[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(text);
    requests.push(body);
    const reply = answer(body);
    if (reply === 'hang') {
      hanging.push(res);
      return;
    }
    res
      .writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers })
      .end(JSON.stringify(reply.body));
  };
  // A failure of the fake itself (a body that is not JSON, an `answer` that throws) is a 500 the
  // client under test sees, not an unhandled rejection.
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `test OpenAI server failed: ${String(error)}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
