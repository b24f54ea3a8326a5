// The customer aggregate (`registry.customer-<uuid>`): the customer record and everything filed under it
// (contacts, touchpoints, agreements, usage records), each change one event on this stream.
// Deletion is an event too: the stream, and so the history, stays for auditors. The slug is
// unique through a reservation stream (domain/shared/reservation.ts), taken before creation.

import { DomainError, type Decider } from '../../shared/decider.ts';
import { applyChanges, diff } from '../catalog.ts';
import type {
  CustomerFields,
  ContactFields,
  TouchpointFields,
  AgreementFields,
  UsageFields,
  Ref,
  CustomerEvent,
} from './events.ts';

export type CustomerCommand =
  | {
      type: 'CreateCustomer';
      customer_id: string;
      slug: string;
      fields: CustomerFields;
      via: 'api' | 'lead';
      at: string;
    }
  | { type: 'UpdateCustomer'; patch: Partial<CustomerFields>; at: string }
  | { type: 'DeleteCustomer'; at: string }
  | { type: 'AddContact'; contact_id: string; contact: ContactFields; at: string }
  | { type: 'LogTouchpoint'; touchpoint_id: string; touchpoint: TouchpointFields; at: string }
  | { type: 'RecordAgreement'; agreement_id: string; agreement: AgreementFields; at: string }
  | { type: 'RecordUsage'; usage_id: string; usage: UsageFields; at: string };

export interface CustomerState {
  ref: Ref | null;
  deleted: boolean;
  fields: CustomerFields | null;
  /** Lower-cased e-mails of the contacts on file: one contact per address. */
  contact_emails: string[];
}

const initialState = (): CustomerState => ({ ref: null, deleted: false, fields: null, contact_emails: [] });

function evolve(state: CustomerState, event: CustomerEvent): CustomerState {
  switch (event.type) {
    case 'CustomerCreated': {
      const { customer_id, slug, via: _via, at: _at, ...fields } = event.data;
      return { ...state, ref: { customer_id, slug }, fields };
    }
    case 'CustomerUpdated':
      return { ...state, fields: state.fields && applyChanges(state.fields, event.data.changes) };
    case 'CustomerDeleted':
      return { ...state, deleted: true };
    case 'ContactAdded':
      return { ...state, contact_emails: [...state.contact_emails, event.data.email.toLowerCase()] };
    case 'TouchpointLogged':
    case 'AgreementRecorded':
    case 'UsageRecorded':
      return state;
  }
}

function live(state: CustomerState): { ref: Ref; fields: CustomerFields } {
  if (!state.ref || !state.fields || state.deleted)
    throw new DomainError('not_found', 'customer_not_found', 'no such customer');
  return { ref: state.ref, fields: state.fields };
}

function decide(command: CustomerCommand, state: CustomerState): CustomerEvent[] {
  switch (command.type) {
    case 'CreateCustomer': {
      if (state.ref) throw new DomainError('conflict', 'customer_exists', 'customer already exists');
      return [
        {
          type: 'CustomerCreated',
          data: {
            customer_id: command.customer_id,
            slug: command.slug,
            ...command.fields,
            via: command.via,
            at: command.at,
          },
        },
      ];
    }
    case 'UpdateCustomer': {
      const { ref, fields } = live(state);
      const changes = diff(fields as unknown as Record<string, unknown>, command.patch as Record<string, unknown>);
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'CustomerUpdated', data: { ...ref, changes, at: command.at } }];
    }
    case 'DeleteCustomer': {
      const { ref } = live(state);
      return [{ type: 'CustomerDeleted', data: { ...ref, at: command.at } }];
    }
    case 'AddContact': {
      const { ref } = live(state);
      if (state.contact_emails.includes(command.contact.email.toLowerCase())) {
        throw new DomainError(
          'conflict',
          'contact_exists',
          `a contact with e-mail ${command.contact.email} is already on file`,
        );
      }
      return [
        { type: 'ContactAdded', data: { ...ref, contact_id: command.contact_id, ...command.contact, at: command.at } },
      ];
    }
    case 'LogTouchpoint': {
      const { ref } = live(state);
      return [
        {
          type: 'TouchpointLogged',
          data: { ...ref, touchpoint_id: command.touchpoint_id, ...command.touchpoint, at: command.at },
        },
      ];
    }
    case 'RecordAgreement': {
      const { ref } = live(state);
      return [
        {
          type: 'AgreementRecorded',
          data: { ...ref, agreement_id: command.agreement_id, ...command.agreement, at: command.at },
        },
      ];
    }
    case 'RecordUsage': {
      const { ref } = live(state);
      return [
        { type: 'UsageRecorded', data: { ...ref, usage_id: command.usage_id, ...command.usage, at: command.at } },
      ];
    }
  }
}

export const customerDecider: Decider<CustomerState, CustomerCommand, CustomerEvent> = { initialState, evolve, decide };

/** Reservation kinds: the slug (409 `slug_taken`), and a lead's e-mail (by hash: personal data). */
export const SLUG_RESERVATION = 'customer_slug';
export const LEAD_EMAIL_RESERVATION = 'lead_email';
