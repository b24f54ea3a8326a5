// The first-run registration claim (`orch.registration-local`) and the shared reservation decider,
// given/when/then: the first claimant wins, the same one again is a no-op, another is refused.

import { suite } from 'uvu';
import { registrationDecider } from '../../../domain/orchestration/users/registration.ts';
import type { RegistrationEvent } from '../../../domain/orchestration/users/events.ts';
import { reservationDecider, type ReservationEvent } from '../../../domain/shared/reservation.ts';
import { spec } from '../../support/given-when-then.ts';

const test = suite('domain: registration claim and reservations');

test('ClaimLocalRegistration: the first user claims; the same user again appends nothing; another is already_registered', () => {
  const claim = spec(registrationDecider);
  const claimed: RegistrationEvent = { type: 'LocalRegistrationClaimed', data: { user_id: 'u1' } };
  claim([]).when({ type: 'ClaimLocalRegistration', user_id: 'u1' }).then([claimed]);
  claim([claimed]).when({ type: 'ClaimLocalRegistration', user_id: 'u1' }).then([]);
  claim([claimed]).when({ type: 'ClaimLocalRegistration', user_id: 'u2' }).thenError('already_registered');
});

test('Reserve: the first owner reserves; the same owner again appends nothing; another gets <kind>_taken', () => {
  const reserve = spec(reservationDecider);
  const reserved: ReservationEvent = { type: 'UniqueValueReserved', data: { kind: 'username', owner_id: 'u1' } };
  reserve([]).when({ type: 'Reserve', kind: 'username', owner_id: 'u1' }).then([reserved]);
  reserve([reserved]).when({ type: 'Reserve', kind: 'username', owner_id: 'u1' }).then([]);
  reserve([reserved]).when({ type: 'Reserve', kind: 'username', owner_id: 'u2' }).thenError('username_taken');
  reserve([{ type: 'UniqueValueReserved', data: { kind: 'customer_slug', owner_id: 'c1' } }])
    .when({ type: 'Reserve', kind: 'customer_slug', owner_id: 'c2' })
    .thenError('customer_slug_taken');
});

test.run();
