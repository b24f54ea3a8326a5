// The console's client-side profile checks (web/console/src/profile-rules.ts) use the server's
// numbers: the decider's limits and slug pattern, and the schemas' text lengths.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LIMITS, SLUG_PATTERN } from '../../../domain/orchestration/profiles/decider.ts';
import { CreateProfileBody, UpdateProfileBody } from '../../../api/orchestration/profiles/schemas.ts';
import * as rules from '../../../web/console/src/profile-rules.ts';

const test = suite('console: profile rules mirror the server');

test('the same limits and slug pattern as the domain', () => {
  assert.equal(rules.LIMITS, LIMITS);
  assert.is(rules.SLUG_PATTERN.source, SLUG_PATTERN.source);
});

test('a value the console accepts the server accepts, and one it refuses the server refuses', () => {
  const cases: Record<string, unknown>[] = [];
  for (const slug of ['a', 'support-bot', '-bot', 'bot-', 'Bot', 'my_bot', 'a'.repeat(60), 'a'.repeat(61), ''])
    cases.push({ slug, name: 'x' });
  for (const name of ['x', '   ', 'n'.repeat(200), 'n'.repeat(201)]) cases.push({ slug: 'ok', name });
  for (const [field, values] of Object.entries({
    security_tier: ['0', '1', '3', '4', '2.5'],
    max_tokens: ['0', '1', '200000', '200001'],
    cost_cap_daily_cents: ['-1', '0', '2147483647', '2147483648'],
    rate_limit_rpm: ['0', '1'],
    rate_limit_rpd: ['0', '1'],
  }))
    for (const text of values) cases.push({ slug: 'ok', name: 'x', [field]: text });
  for (const body of cases) {
    const errors: string[] = [];
    const json: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(body)) {
      if (field === 'slug') {
        const e = rules.checkSlug(value as string);
        if (e) errors.push(e);
        json.slug = value;
      } else if (field === 'name') {
        const e = rules.checkRequiredText('name', value as string);
        if (e) errors.push(e);
        json.name = value;
      } else {
        const r = rules.checkNumber(field as rules.RangedField, value as string);
        if ('error' in r) errors.push(r.error);
        json[field] = Number(value);
      }
    }
    const server = CreateProfileBody.safeParse(json).success;
    assert.is(
      errors.length === 0,
      server,
      `${JSON.stringify(body)}: console ${errors.join(', ') || 'accepts'}, server ${server ? 'accepts' : 'refuses'}`,
    );
  }
  assert.ok(
    UpdateProfileBody.safeParse({ temperature: 2 }).success &&
      rules.checkNumber('temperature', '2').hasOwnProperty('value'),
  );
  assert.ok(
    !UpdateProfileBody.safeParse({ temperature: 2.1 }).success && 'error' in rules.checkNumber('temperature', '2.1'),
  );
});

test.run();
