// The orchestration service's stream categories (`orch.*`): one table, with the id each stream
// is named by and the event types it carries. The stream-name functions below are the only
// place these names are built (see domain/shared/streams.ts, and docs/reference/streams.md,
// generated from this table).

import { RESERVATION_EVENT_TYPES } from '../shared/reservation.ts';
import { streamCategory } from '../shared/streams.ts';
import { CHAT_SECURITY_EVENT_TYPES, CONVERSATION_EVENT_TYPES } from './agent-chat/events.ts';
import { AGENT_EVENT_TYPES } from './agents/events.ts';
import { CHATSVC_AUDIT_EVENT_TYPES, INTEGRATION_EVENT_TYPES } from './chatsvc/events.ts';
import { ESTATE_DOCUMENT_EVENT_TYPES, INGEST_RUN_EVENT_TYPES } from './estate/events.ts';
import { KNOWLEDGE_EVENT_TYPES } from './knowledge/events.ts';
import { MCP_SERVERS_EVENT_TYPES } from './mcp-servers/events.ts';
import { PROFILE_EVENT_TYPES } from './profiles/events.ts';
import { PROJECT_EVENT_TYPES } from './projects/events.ts';
import { TASK_EVENT_TYPES } from './tasks/events.ts';
import {
  REGISTRATION_EVENT_TYPES,
  SECURITY_EVENT_TYPES,
  SESSION_EVENT_TYPES,
  USER_EVENT_TYPES,
} from './users/events.ts';

export const ORCH_STREAMS = {
  user: streamCategory('orch.user', {
    id: 'user uuid',
    events: USER_EVENT_TYPES,
    description: 'A user account: creation, API key rotations, role, deactivation.',
  }),
  session: streamCategory('orch.session', {
    id: 'sha256 of the session id',
    events: SESSION_EVENT_TYPES,
    description: 'A browser session, started at login or forward-auth and ended at logout or expiry.',
  }),
  audit: streamCategory('orch.audit', {
    id: 'event uuid',
    events: [...SECURITY_EVENT_TYPES, ...CHATSVC_AUDIT_EVENT_TYPES, ...CHAT_SECURITY_EVENT_TYPES],
    description:
      'A security audit fact that belongs to no aggregate, one stream each (logins refused, tool calls, prompt injections).',
  }),
  registration: streamCategory('orch.registration', {
    id: '`local`',
    events: REGISTRATION_EVENT_TYPES,
    description: 'The one local registration claim: lets exactly one first account through.',
  }),
  username_reservation: streamCategory('orch.username_reservation', {
    id: 'normalised username',
    events: RESERVATION_EVENT_TYPES,
    description: 'Reservation of a username (kind `username`).',
  }),
  email_reservation: streamCategory('orch.email_reservation', {
    id: 'sha256 of the normalised e-mail',
    events: RESERVATION_EVENT_TYPES,
    description: 'Reservation of an e-mail address (kind `email`).',
  }),
  project: streamCategory('orch.project', {
    id: 'project uuid',
    events: PROJECT_EVENT_TYPES,
    description: 'A project: its settings and owner.',
  }),
  task: streamCategory('orch.task', {
    id: 'task uuid',
    events: TASK_EVENT_TYPES,
    description: 'A task on a project board: status, assignment, deletion.',
  }),
  agent: streamCategory('orch.agent', {
    id: 'agent uuid',
    events: AGENT_EVENT_TYPES,
    description: 'A spawned agent and its credential.',
  }),
  agent_profile: streamCategory('orch.agent_profile', {
    id: 'profile slug',
    events: [...PROFILE_EVENT_TYPES, ...KNOWLEDGE_EVENT_TYPES],
    description: 'An agent profile and its knowledge snippets.',
  }),
  estate_document: streamCategory('orch.estate_document', {
    id: 'document uuid',
    events: ESTATE_DOCUMENT_EVENT_TYPES,
    description: 'An estate knowledge document, ingested or deleted.',
  }),
  estate_run: streamCategory('orch.estate_run', {
    id: 'ingest run uuid',
    events: INGEST_RUN_EVENT_TYPES,
    description: 'One estate ingest run.',
  }),
  integration: streamCategory('orch.integration', {
    id: 'profile uuid',
    events: INTEGRATION_EVENT_TYPES,
    description: "A profile's connection to the chat service.",
  }),
  mcp_servers: streamCategory('orch.mcp_servers', {
    id: '`instance`',
    events: MCP_SERVERS_EVENT_TYPES,
    description: "The instance's MCP server registrations.",
  }),
  agent_conversation: streamCategory('orch.agent_conversation', {
    id: 'conversation id',
    events: CONVERSATION_EVENT_TYPES,
    description: 'A conversation with an agent profile.',
  }),
} as const;

/** The reservation category of each reservation kind the orchestration service reserves. */
export const ORCH_RESERVATIONS = {
  username: ORCH_STREAMS.username_reservation,
  email: ORCH_STREAMS.email_reservation,
} as const;

export const userStream = ORCH_STREAMS.user.stream;
export const sessionStream = ORCH_STREAMS.session.stream;
export const auditStream = ORCH_STREAMS.audit.stream;
export const REGISTRATION_STREAM = ORCH_STREAMS.registration.stream('local');
export const projectStream = ORCH_STREAMS.project.stream;
export const taskStream = ORCH_STREAMS.task.stream;
export const agentStream = ORCH_STREAMS.agent.stream;
export const profileStream = ORCH_STREAMS.agent_profile.stream;
export const estateDocumentStream = ORCH_STREAMS.estate_document.stream;
export const ingestRunStream = ORCH_STREAMS.estate_run.stream;
export const integrationStream = ORCH_STREAMS.integration.stream;
export const MCP_SERVERS_STREAM = ORCH_STREAMS.mcp_servers.stream('instance');
export const conversationStream = ORCH_STREAMS.agent_conversation.stream;
