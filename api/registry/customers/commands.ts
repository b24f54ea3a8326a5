// Customer commands (the slice's application layer, the only caller of the command runner for
// customers): create (slug reserved first: 409 when taken), capture a lead (slug derived and
// de-duplicated, same e-mail answered with the existing customer), update, delete, and what is
// filed under a customer (contacts, touchpoints, agreements, usage); and finding a live customer
// by slug, for these and for the routes filed under it.

import { randomUUID } from 'node:crypto';
import { hashToken } from '../../../crypto/tokens.ts';
import {
  customerDecider,
  LEAD_EMAIL_RESERVATION,
  SLUG_RESERVATION,
  type CustomerCommand,
} from '../../../domain/registry/customers/decider.ts';
import type { CustomerFields } from '../../../domain/registry/customers/events.ts';
import { customerStream, REGISTRY_RESERVATIONS } from '../../../domain/registry/streams.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { reservationDecider, reservationStream } from '../../../domain/shared/reservation.ts';
import { part, type CommandContext } from '../../../infra/commands.ts';
import {
  agreementById,
  contactById,
  customerByEmail,
  customerById,
  customerBySlug,
  touchpointById,
  usageById,
  type CustomerRow,
} from '../../../projections/registry/customers.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { reserveOrResume, takenError } from '../../shared/reservations.ts';
import type { RegistryDeps } from '../deps.ts';

type Deps = Pick<RegistryDeps, 'commands' | 'db' | 'clock'>;

export const MAX_SLUG = 63;

/** A live customer, or 404 `customer_not_found`. */
export async function liveCustomer(deps: Pick<RegistryDeps, 'db'>, slug: string): Promise<CustomerRow> {
  const customer = await customerBySlug(deps.db, slug);
  if (!customer) throw new ApiError(404, 'customer_not_found', `no customer with slug ${slug}`);
  return customer;
}

/**
 * A lead's slug reserved for `customerId` and the customer created: in one log transaction where
 * the store allows it (PostgreSQL), else one append after the other (EventStoreDB: a stop between
 * them leaves the slug reserved for a customer never created; a later capture of the same e-mail
 * completes it under that id, the reservation then its own). Either way the slug's refusal comes
 * first, as `customer_slug_taken`, and nothing is appended for the customer.
 */
async function reserveSlugAndCreate(
  deps: Deps,
  slug: string,
  customerId: string,
  create: CustomerCommand,
  context: CommandContext,
): Promise<void> {
  const reserve = { type: 'Reserve' as const, kind: SLUG_RESERVATION, owner_id: customerId };
  if (deps.commands.canRunTogether) {
    await deps.commands.runTogether(
      [
        part(reservationStream(REGISTRY_RESERVATIONS[SLUG_RESERVATION], slug), reservationDecider, reserve),
        part(customerStream(customerId), customerDecider, create),
      ],
      context,
    );
    return;
  }
  await deps.commands.run(
    reservationStream(REGISTRY_RESERVATIONS[SLUG_RESERVATION], slug),
    reservationDecider,
    reserve,
    context,
  );
  await deps.commands.run(customerStream(customerId), customerDecider, create, context);
}

/**
 * Reserve the slug and create the customer.
 *
 * Where the store appends several streams in one transaction (PostgreSQL), the reservation and
 * the customer are appended together: both or neither, so a crash cannot leave the slug reserved
 * for a customer that never existed. A slug already reserved goes the second way below, which
 * answers 409 for a live customer and takes over a reservation orphaned before (by the second
 * way, or by logs written before the first).
 *
 * Where it cannot (EventStoreDB), and for a reserved slug: reserve, then create, two appends. A
 * slug reserved by a creation that never created its customer (it failed between the two) is
 * taken over: the customer is created under that reservation's id (api/shared/reservations.ts),
 * so retrying a failed creation completes it.
 */
export async function createCustomer(
  deps: Deps,
  slug: string,
  fields: CustomerFields,
  via: 'api' | 'lead',
  context: CommandContext,
): Promise<CustomerRow> {
  const create = (customerId: string) => ({
    type: 'CreateCustomer' as const,
    customer_id: customerId,
    slug,
    fields,
    via,
    at: deps.clock.now().toISOString(),
  });
  if (deps.commands.canRunTogether) {
    const customerId = randomUUID();
    try {
      await deps.commands.runTogether(
        [
          part(reservationStream(REGISTRY_RESERVATIONS[SLUG_RESERVATION], slug), reservationDecider, {
            type: 'Reserve',
            kind: SLUG_RESERVATION,
            owner_id: customerId,
          }),
          part(customerStream(customerId), customerDecider, create(customerId)),
        ],
        context,
      );
      return (await customerById(deps.db, customerId))!;
    } catch (error) {
      if (!(error instanceof DomainError && error.code === takenError(SLUG_RESERVATION).code)) throw error;
    }
  }
  const customerId = await reserveOrResume(
    deps.commands,
    {
      kind: SLUG_RESERVATION,
      category: REGISTRY_RESERVATIONS[SLUG_RESERVATION],
      key: slug,
      ownerId: randomUUID(),
      ownerStream: customerStream,
    },
    context,
  );
  try {
    await deps.commands.run(customerStream(customerId), customerDecider, create(customerId), context);
  } catch (error) {
    // Another attempt at this slug created the customer first.
    if (error instanceof DomainError && error.code === 'customer_exists') throw takenError(SLUG_RESERVATION);
    throw error;
  }
  return (await customerById(deps.db, customerId))!;
}

/** A slug from free text: lowercase ASCII letters and digits, runs of anything else as one dash. */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG - 4)
    .replace(/-+$/, '');
}

/** The slug a lead gets before de-duplication: from the name, else the e-mail's local part, else `lead`. */
export const leadSlugBase = (name: string, email: string) =>
  slugify(name) || slugify(email.split('@')[0] ?? '') || 'lead';

const MAX_SLUG_ATTEMPTS = 1000;
const IN_FLIGHT_WAIT_MS = 5000;

/** The live customer that reserved a lead's e-mail; null once deleted, or if its capture never completed. */
async function ownerOf(deps: Deps, customerId: string): Promise<CustomerRow | null> {
  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  for (;;) {
    const history = await deps.commands.store.readStream(customerStream(customerId));
    if (history.some((e) => e.type === 'CustomerDeleted')) return null;
    // Created in the log but perhaps not yet in the read model: wait for both.
    const row = history.length > 0 ? await customerById(deps.db, customerId) : null;
    if (row || Date.now() > deadline) return row;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Capture a lead. The same e-mail (case-insensitive) as a live customer answers that customer
 * (`created: false`). Otherwise the e-mail is reserved (two racing captures of one e-mail make
 * one customer), the slug derived and taken with `-2`, `-3`, ... when needed, and the customer
 * created with status `lead`.
 */
export async function captureLead(
  deps: Deps,
  input: { name?: string | null; email: string; source?: string | null },
  context: CommandContext,
): Promise<{ customer: CustomerRow; created: boolean }> {
  const email = input.email.trim();
  const name = input.name?.trim() || null;
  const existing = await customerByEmail(deps.db, email);
  if (existing) return { customer: existing, created: false };
  let customerId: string = randomUUID();
  const emailStream = reservationStream(REGISTRY_RESERVATIONS[LEAD_EMAIL_RESERVATION], hashToken(email.toLowerCase()));
  try {
    await deps.commands.run(
      emailStream,
      reservationDecider,
      { type: 'Reserve', kind: LEAD_EMAIL_RESERVATION, owner_id: customerId },
      context,
    );
  } catch (error) {
    if (!(error instanceof DomainError && error.kind === 'conflict')) throw error;
    // Someone captured this e-mail before: answer their customer while it lives (waiting for a
    // capture still in flight); after its deletion the e-mail may come in again as a new lead.
    const [reservation] = await deps.commands.store.readStream(emailStream, { limit: 1 });
    const ownerId = reservation ? String(reservation.data.owner_id) : null;
    const owner = ownerId ? await ownerOf(deps, ownerId) : null;
    if (owner) return { customer: owner, created: false };
    // A capture that failed before creating its customer: complete it, under its id (its slug
    // reservation, if it made one, is then its own; see api/shared/reservations.ts).
    if (ownerId && (await deps.commands.store.readStream(customerStream(ownerId), { limit: 1 })).length === 0)
      customerId = ownerId;
  }
  const base = leadSlugBase(name ?? '', email);
  const fields: CustomerFields = {
    name: name ?? email,
    primary_email: email,
    status: 'lead',
    notes: null,
    pipeline_stage: null,
    next_action: null,
    next_action_date: null,
    source: input.source ?? null,
  };
  for (let n = 1; n <= MAX_SLUG_ATTEMPTS; n++) {
    const slug = n === 1 ? base : `${base}-${n}`;
    try {
      await reserveSlugAndCreate(
        deps,
        slug,
        customerId,
        {
          type: 'CreateCustomer',
          customer_id: customerId,
          slug,
          fields,
          via: 'lead',
          at: deps.clock.now().toISOString(),
        },
        context,
      );
    } catch (error) {
      if (error instanceof DomainError && error.code === takenError(SLUG_RESERVATION).code) continue;
      // The capture this one completes finished first after all: answer its customer.
      const first =
        error instanceof DomainError && error.code === 'customer_exists' ? await ownerOf(deps, customerId) : null;
      if (first) return { customer: first, created: false };
      throw error;
    }
    return { customer: (await customerById(deps.db, customerId))!, created: true };
  }
  throw new ApiError(409, 'customer_slug_taken', `no free slug derived from ${base}`);
}

/** Update any field but the slug of the live customer `slug`; the customer as changed. */
export async function updateCustomer(
  deps: Deps,
  slug: string,
  patch: Extract<CustomerCommand, { type: 'UpdateCustomer' }>['patch'],
  context: CommandContext,
): Promise<CustomerRow> {
  const customer = await liveCustomer(deps, slug);
  await deps.commands.run(
    customerStream(customer.id),
    customerDecider,
    { type: 'UpdateCustomer', patch, at: deps.clock.now().toISOString() },
    context,
  );
  return (await customerById(deps.db, customer.id))!;
}

/** Delete the live customer `slug` (an event: the history stays). */
export async function deleteCustomer(deps: Deps, slug: string, context: CommandContext): Promise<void> {
  const customer = await liveCustomer(deps, slug);
  await deps.commands.run(
    customerStream(customer.id),
    customerDecider,
    { type: 'DeleteCustomer', at: deps.clock.now().toISOString() },
    context,
  );
}

type Filed<T extends CustomerCommand['type'], K extends keyof Extract<CustomerCommand, { type: T }>> = Extract<
  CustomerCommand,
  { type: T }
>[K];

/** Run a command on the live customer named by `slug`. */
async function file(deps: Deps, slug: string, command: CustomerCommand, context: CommandContext): Promise<void> {
  const customer = await liveCustomer(deps, slug);
  await deps.commands.run(customerStream(customer.id), customerDecider, command, context);
}

export async function addContact(
  deps: Deps,
  slug: string,
  contact: Filed<'AddContact', 'contact'>,
  context: CommandContext,
) {
  const id = randomUUID();
  await file(deps, slug, { type: 'AddContact', contact_id: id, at: deps.clock.now().toISOString(), contact }, context);
  return (await contactById(deps.db, id))!;
}

export async function logTouchpoint(
  deps: Deps,
  slug: string,
  touchpoint: Filed<'LogTouchpoint', 'touchpoint'>,
  context: CommandContext,
) {
  const id = randomUUID();
  await file(
    deps,
    slug,
    { type: 'LogTouchpoint', touchpoint_id: id, at: deps.clock.now().toISOString(), touchpoint },
    context,
  );
  return (await touchpointById(deps.db, id))!;
}

export async function recordAgreement(
  deps: Deps,
  slug: string,
  agreement: Filed<'RecordAgreement', 'agreement'>,
  context: CommandContext,
) {
  const id = randomUUID();
  await file(
    deps,
    slug,
    { type: 'RecordAgreement', agreement_id: id, at: deps.clock.now().toISOString(), agreement },
    context,
  );
  return (await agreementById(deps.db, id))!;
}

export async function recordUsage(
  deps: Deps,
  slug: string,
  usage: Filed<'RecordUsage', 'usage'>,
  context: CommandContext,
) {
  const id = randomUUID();
  await file(deps, slug, { type: 'RecordUsage', usage_id: id, at: deps.clock.now().toISOString(), usage }, context);
  return (await usageById(deps.db, id))!;
}
