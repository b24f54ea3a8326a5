// zod validation for request bodies and queries; a failure throws the ZodError, which the base
// app's error handler renders in the service's own error form (400 or the service's status).

import { zValidator } from '@hono/zod-validator';
import type { ValidationTargets } from 'hono';
import type { ZodType } from 'zod';

export function validate<T extends ZodType, Target extends keyof ValidationTargets>(target: Target, schema: T) {
  return zValidator(target, schema, (result) => {
    if (!result.success) throw result.error;
  });
}
