// Every projection the platform runs, registered once. `orchard rebuild <name>` takes these names.

import type { Projection } from '../infra/processors/projection.ts';
import { chatUsersProjection } from './chat/accounts.ts';
import { chatInvitesProjection } from './chat/invites.ts';
import { chatBotProjections } from './chat/bots.ts';
import { chatKeysProjection } from './chat/keys.ts';
import { chatSessionsProjection } from './chat/sessions.ts';
import { chatTotpProjection } from './chat/totp.ts';
import { chatBlocksProjection, chatReportsProjection } from './chat/users.ts';
import { chatChannelsProjection } from './chat/channels.ts';
import { chatCommunitiesProjection } from './chat/communities.ts';
import { chatGroupsProjection } from './chat/groups.ts';
import { chatMessagesProjection } from './chat/messages.ts';
import { chatSenderKeysProjection } from './chat/sender-keys.ts';
import { chatPollsProjection } from './chat/polls.ts';
import { chatScheduledProjection, scheduledJobsProjection } from './chat/scheduled.ts';
import { chatBookmarksProjection } from './chat/bookmarks.ts';
import { chatMeetingsProjection } from './chat/meetings.ts';
import { chatCalendarFeedsProjection } from './chat/calendar-feeds.ts';
import { chatPushSubscriptionsProjection } from './chat/push.ts';
import { chatFilesProjection } from './chat/files.ts';
import { chatAssetsProjection } from './chat/assets.ts';
import { estateProjections } from './orchestration/estate.ts';
import { usersProjections } from './orchestration/users.ts';
import { profilesProjection } from './orchestration/profiles.ts';
import { knowledgeSnippetsProjection } from './orchestration/knowledge.ts';
import { agentChatProjection } from './orchestration/agent-chat.ts';
import { auditLogProjection } from './orchestration/audit.ts';
import { registryProjections } from './registry/index.ts';
import { projectsProjection } from './orchestration/projects.ts';
import { tasksProjection } from './orchestration/tasks.ts';
import { agentsProjection } from './orchestration/agents.ts';
import { mcpServersProjection } from './orchestration/mcp-servers.ts';
import { cockpitProjection } from './orchestration/cockpit.ts';
import { updateProjections } from './updates.ts';
import { chatsvcIntegrationsProjection } from './orchestration/chatsvc.ts';

export const allProjections: Projection<any>[] = [
  ...usersProjections,
  profilesProjection,
  knowledgeSnippetsProjection,
  ...estateProjections,
  agentChatProjection,
  auditLogProjection,
  projectsProjection,
  tasksProjection,
  agentsProjection,
  mcpServersProjection,
  cockpitProjection,
  chatsvcIntegrationsProjection,
  ...registryProjections,
  chatUsersProjection,
  chatSessionsProjection,
  chatTotpProjection,
  chatKeysProjection,
  chatBlocksProjection,
  chatReportsProjection,
  chatInvitesProjection,
  ...updateProjections,
  chatCommunitiesProjection,
  chatGroupsProjection,
  chatChannelsProjection,
  chatMessagesProjection,
  chatSenderKeysProjection,
  ...chatBotProjections,
  chatPollsProjection,
  chatScheduledProjection,
  scheduledJobsProjection,
  chatBookmarksProjection,
  chatFilesProjection,
  chatAssetsProjection,
  chatMeetingsProjection,
  chatCalendarFeedsProjection,
  chatPushSubscriptionsProjection,
];
