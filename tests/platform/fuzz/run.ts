// Sending the requests and judging the answers: each request goes in-process through the app
// (`http()` of tests/support/services.ts), as its principal, under a per-request timeout; the
// answer is checked against the document and the log lines it produced are scanned for
// unhandled errors and stack traces. A finding carries everything needed to replay it.

import { http, type TestServices } from '../../support/services.ts';
import type { Operation, ServiceDocument } from './documents.ts';
import { MUTATIONS } from './mutations.ts';
import { credentials, type World } from './principals.ts';
import { prng, serialise, url, type FuzzRequest, type RequestFactory } from './requests.ts';
import type { ResponseChecker } from './responses.ts';

export interface Finding {
  op: string;
  kind: string;
  problem: string;
  replay: string;
}

export interface FuzzOptions {
  seed: number;
  /** Valid requests per operation (as the right principal). */
  valid: number;
  /** Rounds of every mutation kind per operation. */
  rounds: number;
  timeoutMs: number;
}

const BASE: Record<Operation['service'], keyof Pick<TestServices, 'orch' | 'chat' | 'registry'>> = {
  orch: 'orch',
  chat: 'chat',
  registry: 'registry',
};

/** A log line that says a request failed unhandled, carries a stack trace, or is an error (a projection that failed on an event). */
const BAD_LOG = /"msg":"unhandled_error"|\\n\s+at [^\s]+ \(|"stack":"|"level":"error"/;

const show = (value: string | Uint8Array | undefined, max = 300) => {
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : `<${value.length} bytes>`;
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
};

export class Fuzzer {
  readonly findings: Finding[] = [];
  sent = 0;
  private sequence = 0;
  private scanned = 0;
  private readonly defs: Map<string, ServiceDocument['defs']>;

  constructor(
    private readonly world: World,
    documents: ServiceDocument[],
    private readonly factory: RequestFactory,
    private readonly checker: ResponseChecker,
    private readonly options: FuzzOptions,
  ) {
    this.defs = new Map(documents.map((d) => [d.service, d.defs]));
  }

  /** Every request of one operation: valid ones, then each mutation kind `rounds` times. */
  async operation(op: Operation, index: number): Promise<void> {
    const seedOf = (i: number) => (this.options.seed * 1_000_003 + index * 7_919 + i) >>> 0;
    for (let i = 0; i < this.options.valid; i++) await this.send(this.factory.valid(op, seedOf(i)));
    for (let round = 0; round < this.options.rounds; round++) {
      let k = 0;
      for (const [kind, mutate] of Object.entries(MUTATIONS)) {
        const seed = seedOf(1000 + round * 100 + k++);
        for (const request of mutate(this.factory.valid(op, seed), prng(seed), this.defs.get(op.service) ?? {}))
          await this.send(request, kind);
      }
    }
  }

  /** Bad log lines of no request (a reactor, a projection) since the last call. */
  unattributed(): Finding[] {
    const lines = this.world.s.logLines.slice(this.scanned);
    this.scanned += lines.length;
    return lines
      .filter((line) => BAD_LOG.test(line) && !/"request_id":"fuzz-/.test(line))
      .map((line) => ({
        op: '(no request)',
        kind: 'log',
        problem: `log: ${show(line, 300)}`,
        replay: `FUZZ_SEED=${this.options.seed}`,
      }));
  }

  private async send(request: FuzzRequest, kind = 'valid'): Promise<void> {
    const { op } = request;
    const target = `${this.world.s[BASE[op.service]]}${url(request)}`;
    const { body, contentType } = op.method === 'GET' || op.method === 'HEAD' ? {} : serialise(request);
    // Our own request id (hono's requestId() keeps a well-formed incoming one): the log lines of
    // this request are found by it, whatever else runs at the same time.
    const id = `fuzz-${this.options.seed}-${++this.sequence}`;
    const headers: Record<string, string> = {
      ...request.headers,
      ...(await credentials(this.world, op, request.who)),
      'x-request-id': id,
    };
    if (contentType) headers['content-type'] = contentType;
    const replay = `FUZZ_SEED=${this.options.seed} ${op.method} ${show(url(request), 200)} as ${request.who}; ${request.note}${body !== undefined ? `; body (${contentType ?? 'no content type'}): ${show(body)}` : ''}`;
    const logFrom = this.world.s.logLines.length;
    this.sent++;
    let timer: NodeJS.Timeout | undefined;
    try {
      const reply = await Promise.race([
        http(target, { method: op.method, headers, ...(body !== undefined ? { body } : {}) }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${this.options.timeoutMs} ms`)),
            this.options.timeoutMs,
          );
        }),
      ]);
      for (const problem of this.checker.check(op, {
        status: reply.status,
        contentType: reply.headers.get('content-type') ?? '',
        text: reply.text,
      })) {
        this.findings.push({ op: op.key, kind, problem: `${problem} — answered: ${show(reply.text, 200)}`, replay });
      }
    } catch (error) {
      this.findings.push({ op: op.key, kind, problem: `the request failed: ${(error as Error).message}`, replay });
    } finally {
      clearTimeout(timer);
    }
    const bad = this.world.s.logLines
      .slice(logFrom)
      .filter((line) => line.includes(`"request_id":"${id}"`) && BAD_LOG.test(line));
    for (const line of bad) this.findings.push({ op: op.key, kind, problem: `log: ${show(line, 300)}`, replay });
  }
}
