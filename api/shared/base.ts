// What every service's Hono app starts with: a request id on every request and response,
// one JSON log line per request, zod validation failures and domain rejections turned into the
// service's error body, and unexpected errors answered 500 without internals.

import { Hono, type Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ZodError } from 'zod';
import { DomainError } from '../../domain/shared/decider.ts';
import type { Logger } from '../../infra/logging.ts';
import { ApiError, STATUS_OF } from './http-errors.ts';

export interface ErrorShape {
  status: ContentfulStatusCode;
  code: string;
  message: string;
  extra?: Record<string, unknown>;
}

/** Renders an error in a service's own body form. */
export type ErrorBody = (error: ErrorShape) => Record<string, unknown>;

export type AppEnv<Vars extends object = object> = { Variables: Vars & { requestId: string } };

export function zodMessage(error: ZodError): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
}

export function toErrorShape(error: unknown): ErrorShape | null {
  if (error instanceof ApiError) return { status: error.status, code: error.code, message: error.message, extra: error.extra };
  if (error instanceof DomainError) return { status: STATUS_OF[error.kind], code: error.code, message: error.message, extra: error.details };
  if (error instanceof ZodError) return { status: 400, code: 'validation_failed', message: zodMessage(error) };
  // Hono's own rejections, e.g. a body that is not JSON.
  if (error instanceof HTTPException && error.status < 500) {
    return { status: error.status as ContentfulStatusCode, code: error.status === 400 ? 'invalid_json' : 'bad_request', message: error.message };
  }
  return null;
}

export function createBaseApp<Vars extends object>(service: string, log: Logger, errorBody: ErrorBody): Hono<AppEnv<Vars>> {
  const app = new Hono<AppEnv<Vars>>();
  app.use(requestId());
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    log.info('request', {
      service, request_id: c.get('requestId'), method: c.req.method, path: c.req.path,
      status: c.res.status, ms: Math.round((performance.now() - started) * 10) / 10,
    });
  });
  app.onError((error, c) => {
    const shape = toErrorShape(error);
    if (shape) {
      if (error instanceof ApiError) for (const [k, v] of Object.entries(error.headers)) c.header(k, v);
      return c.json(errorBody(shape), shape.status);
    }
    log.error('unhandled_error', { service, request_id: c.get('requestId'), error: (error as Error).message, stack: (error as Error).stack });
    return c.json(errorBody({ status: 500, code: 'internal', message: 'internal error', extra: { request_id: c.get('requestId') } }), 500);
  });
  app.notFound((c: Context) => c.json(errorBody({ status: 404, code: 'not_found', message: 'no such route' }), 404));
  return app;
}
