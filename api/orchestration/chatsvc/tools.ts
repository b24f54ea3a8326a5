// The connector's outbound tools (spec 1, "Tool inputs"): one zod schema per tool, used by the
// tool route (strict, with the `tool` discriminator) and, through z.toJSONSchema, offered to
// models as `chatsvc_<tool>` functions.

import { z } from '@hono/zod-openapi';
import type { ToolSpec } from '../../../infra/llm/index.ts';

export const TOOL_NAMES = ['send_message', 'create_channel', 'invite_member'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const TOOL_INPUTS = {
  send_message: z.strictObject({
    channel_id: z.uuid().openapi({
      description: 'a channel the bot can post to through a webhook (the bot must be community owner or admin)',
    }),
    content: z
      .string()
      .min(1)
      .max(4000)
      .openapi({ description: 'Markdown; posted as plaintext (webhook messages are not end-to-end encrypted)' }),
  }),
  create_channel: z.strictObject({
    group_id: z.uuid(),
    name: z.string().trim().min(1).max(100),
    kind: z.enum(['text', 'voice', 'announcement']).default('text'),
    description: z.string().max(1000).optional(),
  }),
  invite_member: z.strictObject({
    community_id: z.uuid(),
    email: z
      .email()
      .optional()
      .openapi({ description: 'recorded in the audit row only: the chat service mints generic invite codes' }),
    role: z
      .enum(['member', 'moderator', 'admin'])
      .optional()
      .openapi({ description: 'the role the invite grants (default member)' }),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  }),
} as const;

export const TOOL_DESCRIPTIONS: Record<ToolName, string> = {
  send_message: 'Post a plaintext Markdown message to a chat channel (through a channel webhook).',
  create_channel: 'Create a channel in a chat group.',
  invite_member: 'Mint an invite code to a chat community.',
};

/** The route's body: the inputs plus `tool`, which must equal the path's tool name. */
export const toolBody = (name: ToolName) =>
  (TOOL_INPUTS[name] as z.ZodObject<any>).extend({ tool: z.string() }).strict();

export const ToolRequest = z
  .object({ tool: z.string().optional().openapi({ description: "must equal the path's tool_name" }) })
  .passthrough()
  .openapi('ChatsvcToolRequest');

/** The functions offered to a model (`chatsvc_<tool>`), their schemas from the same zod. */
export function modelToolSpecs(): ToolSpec[] {
  return TOOL_NAMES.map((name) => {
    const schema = z.toJSONSchema(TOOL_INPUTS[name], { io: 'input' }) as Record<string, unknown>;
    delete schema.$schema;
    return { name: `chatsvc_${name}`, description: TOOL_DESCRIPTIONS[name], parameters: schema };
  });
}

export const ToolResponse = z
  .object({
    ok: z.boolean(),
    tool: z.enum(TOOL_NAMES),
    target_id: z.string().nullable().openapi({ description: 'the channel, group or community acted on' }),
    status: z.number().int().openapi({ description: "the chat service's status" }),
    payload: z.unknown().openapi({ description: "the chat service's response" }),
    error_msg: z.string().nullable(),
  })
  .openapi('ChatsvcToolResult');

export type ToolResult = z.infer<typeof ToolResponse>;
