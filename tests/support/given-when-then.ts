// Given/when/then for deciders: given past events, when a command, then events or an error.

import * as assert from 'uvu/assert';
import { DomainError, type Decider, type DomainEvent } from '../../domain/shared/decider.ts';

export function spec<State, Command, Event extends DomainEvent>(decider: Decider<State, Command, Event>) {
  return (given: Event[]) => ({
    when: (command: Command) => {
      const run = () => decider.decide(command, given.reduce(decider.evolve, decider.initialState()));
      return {
        then(expected: Event[] | ((events: Event[]) => void)) {
          const events = run();
          if (typeof expected === 'function') expected(events);
          else assert.equal(events, expected);
        },
        thenError(code: string) {
          try {
            run();
          } catch (error) {
            assert.instance(error, DomainError);
            assert.is((error as DomainError).code, code);
            return;
          }
          assert.unreachable(`expected DomainError ${code}`);
        },
      };
    },
  });
}
