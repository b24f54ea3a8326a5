// The bench's area runner: an area that fails is named with its error and the areas after it
// still run (a refused connection in one figure once ended the whole `npm run bench`);
// BENCH_AREAS picks areas by words of their names.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { areaFilter, runAreas, type Area } from '../../bench/areas.ts';

const test = suite('bench areas');

test('a failing area is reported by name with its error; the others still run', async () => {
  const done: string[] = [];
  const lines: string[] = [];
  const areas: Area[] = [
    { name: 'log', run: async () => void done.push('log') },
    {
      name: 'chat_schedule',
      run: async () => {
        throw new Error('sorry, too many clients already');
      },
    },
    { name: 'console', run: async () => void done.push('console') },
  ];
  const outcome = await runAreas(areas, (m) => lines.push(m));
  assert.equal(done, ['log', 'console']);
  assert.equal(outcome.ran, ['log', 'chat_schedule', 'console']);
  assert.equal(outcome.failed, [{ name: 'chat_schedule', error: 'sorry, too many clients already' }]);
  assert.ok(lines.some((l) => l.includes('FAILED chat_schedule: sorry, too many clients already')));
});

test('BENCH_AREAS: only the areas whose name holds one of the words', async () => {
  const done: string[] = [];
  const areas: Area[] = ['log_append_paired', 'chat', 'chat_schedule', 'estate'].map((name) => ({
    name,
    run: async () => void done.push(name),
  }));
  assert.equal(areaFilter(' schedule, estate ,'), ['schedule', 'estate']);
  const outcome = await runAreas(areas, () => {}, areaFilter('schedule,estate'));
  assert.equal(done, ['chat_schedule', 'estate']);
  assert.equal(outcome.failed, []);
  assert.equal(areaFilter(undefined), []);
});

test.run();
