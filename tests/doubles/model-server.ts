// A test double of a model provider: a real HTTP server on loopback that speaks the OpenAI Chat
// Completions protocol (`POST /v1/chat/completions`) or the Anthropic Messages protocol
// (`POST /v1/messages`). Suites script its answers (a queue: status, headers, body, or a raw
// text body, or a stall past the client's timeout) and read back what it received: the
// headers and parsed bodies of every request.

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Protocol = 'openai' | 'anthropic';

export interface Scripted {
  status?: number;
  headers?: Record<string, string>;
  /** JSON body; default: a normal completion (see `reply`). */
  body?: unknown;
  /** A raw body instead (a malformed answer). */
  raw?: string;
  /** Never answer (the client's timeout fires). */
  stall?: boolean;
}

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  at: number;
}

/** A normal completion in the protocol's shape. */
export function completion(
  protocol: Protocol,
  text: string,
  usage = { input: 42, output: 7, cache_read: 10 },
): unknown {
  return protocol === 'openai'
    ? {
        id: 'chatcmpl-test',
        object: 'chat.completion',
        model: 'test',
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
          prompt_tokens_details: { cached_tokens: usage.cache_read },
        },
      }
    : {
        id: 'msg_test',
        type: 'message',
        role: 'assistant',
        model: 'test',
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        usage: {
          input_tokens: usage.input - usage.cache_read,
          output_tokens: usage.output,
          cache_read_input_tokens: usage.cache_read,
          cache_creation_input_tokens: 0,
        },
      };
}

export class ModelServer {
  readonly received: Received[] = [];
  private readonly script: Scripted[] = [];
  /** What a request gets once the script is used up. */
  replyText = 'Hello from the test model.';
  private server!: Server;
  url = '';

  constructor(readonly protocol: Protocol) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let data = '';
      req.on('data', (chunk) => (data += chunk));
      req.on('end', () => {
        let body: unknown = null;
        try {
          body = JSON.parse(data);
        } catch {
          body = data;
        }
        this.received.push({ path: req.url ?? '', headers: req.headers, body, at: Date.now() });
        const expected = this.protocol === 'openai' ? '/v1/chat/completions' : '/v1/messages';
        if (req.method !== 'POST' || req.url !== expected) {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
          return;
        }
        const next = this.script.shift() ?? {};
        if (next.stall) return; // the client gives up
        res.writeHead(next.status ?? 200, { 'content-type': 'application/json', ...next.headers });
        res.end(next.raw ?? JSON.stringify(next.body ?? completion(this.protocol, this.replyText)));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The base URL the adapter is configured with (OpenAI's includes the version path). */
  get baseUrl(): string {
    return this.protocol === 'openai' ? `${this.url}/v1` : this.url;
  }

  answer(...answers: Scripted[]): this {
    this.script.push(...answers);
    return this;
  }

  reset(): void {
    this.received.length = 0;
    this.script.length = 0;
  }

  last(): Received {
    const last = this.received.at(-1);
    if (!last) throw new Error('the model server received nothing');
    return last;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
