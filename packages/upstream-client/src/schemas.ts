import { z } from 'zod'

// Response schemas at the runtime boundary (OpenCode 1.18.33, see the OpenAPI document). Each one
// checks only the fields the gateway reads and lets every other field through (`looseObject`),
// so a runtime that adds fields keeps working and one that drops or retypes a used field fails
// loudly with ERR_UPSTREAM_SCHEMA.

const metadata = z.record(z.string(), z.unknown())

const tokens = z.looseObject({
  input: z.number(),
  output: z.number(),
  reasoning: z.number(),
  cache: z.looseObject({ read: z.number(), write: z.number() }),
})

/** A per-file change: `GET /session/{id}/diff?messageID=` items and session summaries. */
export const FileDiffSchema = z.looseObject({
  file: z.string().optional(),
  patch: z.string().optional(),
  additions: z.number(),
  deletions: z.number(),
  status: z.enum(['added', 'deleted', 'modified']).optional(),
})
export type FileDiff = z.infer<typeof FileDiffSchema>

/** A session (`POST/GET/PATCH /session…`, fork). `metadata` carries the gateway's ownership record. */
export const SessionSchema = z.looseObject({
  id: z.string(),
  title: z.string(),
  directory: z.string().optional(),
  parentID: z.string().optional(),
  agent: z.string().optional(),
  metadata: metadata.optional(),
  summary: z.looseObject({ additions: z.number(), deletions: z.number(), files: z.number() }).optional(),
  time: z.looseObject({
    created: z.number(),
    updated: z.number(),
    archived: z.number().optional(),
  }),
})
export type Session = z.infer<typeof SessionSchema>

/**
 * A session as one page of `GET /session` gives it to a lister: only the fields a listing reads
 * (id, title, parent, ownership metadata, summary counts, times), everything else DROPPED rather
 * than copied, so a page of thousands of records is validated and kept at a fraction of the cost.
 */
export const SessionListItemSchema = z.object({
  id: z.string(),
  title: z.string(),
  parentID: z.string().optional(),
  metadata: metadata.optional(),
  summary: z.object({ additions: z.number(), deletions: z.number(), files: z.number() }).optional(),
  time: z.object({ created: z.number(), updated: z.number() }),
})
export type SessionListItem = z.infer<typeof SessionListItemSchema>

/** One session's state in `GET /session/status`. Idle sessions are absent from that map. */
export const SessionStatusSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('idle') }),
  z.looseObject({ type: z.literal('busy') }),
  z.looseObject({
    type: z.literal('retry'),
    attempt: z.number(),
    message: z.string(),
    next: z.number(),
  }),
])
export type SessionStatus = z.infer<typeof SessionStatusSchema>

/** `GET /session/status`: session id → status, for busy and retrying sessions only. */
export const SessionStatusMapSchema = z.record(z.string(), SessionStatusSchema)
export type SessionStatusMap = z.infer<typeof SessionStatusMapSchema>

/** A provider or runtime error attached to an assistant message or a `session.error` event. */
export const MessageErrorSchema = z.looseObject({
  name: z.string(),
  data: z.looseObject({ message: z.string().optional() }).optional(),
})
export type MessageError = z.infer<typeof MessageErrorSchema>

/** The user message of a turn; its id is the `messageID` sent with `promptAsync`. */
export const UserMessageSchema = z.looseObject({
  id: z.string(),
  sessionID: z.string(),
  role: z.literal('user'),
  time: z.looseObject({ created: z.number() }),
  agent: z.string().optional(),
})
export type UserMessage = z.infer<typeof UserMessageSchema>

/** One step of a turn's answer; `parentID` is the user message id of its turn. */
export const AssistantMessageSchema = z.looseObject({
  id: z.string(),
  sessionID: z.string(),
  role: z.literal('assistant'),
  parentID: z.string(),
  time: z.looseObject({ created: z.number(), completed: z.number().optional() }),
  finish: z.string().optional(),
  error: MessageErrorSchema.optional(),
  cost: z.number().optional(),
  tokens: tokens.optional(),
  agent: z.string().optional(),
})
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>

/** A message's `info`: user or assistant. */
export const MessageInfoSchema = z.discriminatedUnion('role', [UserMessageSchema, AssistantMessageSchema])
export type MessageInfo = z.infer<typeof MessageInfoSchema>

const partBase = { id: z.string(), sessionID: z.string(), messageID: z.string() }

/** Text written by the user or the model. `metadata` round-trips what the client sent. */
export const TextPartSchema = z.looseObject({
  ...partBase,
  type: z.literal('text'),
  text: z.string(),
  synthetic: z.boolean().optional(),
  metadata: metadata.optional(),
})
export type TextPart = z.infer<typeof TextPartSchema>

/** The model's reasoning text, when the provider streams it. */
export const ReasoningPartSchema = z.looseObject({
  ...partBase,
  type: z.literal('reasoning'),
  text: z.string(),
})
export type ReasoningPart = z.infer<typeof ReasoningPartSchema>

/** A tool call: pending → running → completed | error. */
export const ToolStateSchema = z.looseObject({
  status: z.enum(['pending', 'running', 'completed', 'error']),
  input: z.record(z.string(), z.unknown()).optional(),
  title: z.string().optional(),
  output: z.string().optional(),
  error: z.string().optional(),
})
export type ToolState = z.infer<typeof ToolStateSchema>

/** A tool call part. */
export const ToolPartSchema = z.looseObject({
  ...partBase,
  type: z.literal('tool'),
  callID: z.string(),
  tool: z.string(),
  state: ToolStateSchema,
})
export type ToolPart = z.infer<typeof ToolPartSchema>

/** Start of one model step. */
export const StepStartPartSchema = z.looseObject({ ...partBase, type: z.literal('step-start') })
export type StepStartPart = z.infer<typeof StepStartPartSchema>

/** End of one model step: why it ended, cost and tokens (the run's usage is their sum). */
export const StepFinishPartSchema = z.looseObject({
  ...partBase,
  type: z.literal('step-finish'),
  reason: z.string(),
  cost: z.number(),
  tokens,
})
export type StepFinishPart = z.infer<typeof StepFinishPartSchema>

/** Files a step changed (snapshot hash and paths). */
export const PatchPartSchema = z.looseObject({
  ...partBase,
  type: z.literal('patch'),
  hash: z.string(),
  files: z.array(z.string()),
})
export type PatchPart = z.infer<typeof PatchPartSchema>

const modelledPartTypes = ['text', 'reasoning', 'tool', 'step-start', 'step-finish', 'patch'] as const

/**
 * The part types this client does not model. Any other `type` string the runtime may add is also
 * accepted at run time and lands here: treat these parts as opaque.
 */
export type OtherPartType = 'file' | 'subtask' | 'snapshot' | 'agent' | 'retry' | 'compaction'

/** A part of a type this client does not model; only the common fields are checked. */
export const OtherPartSchema = z.looseObject({
  ...partBase,
  type: z
    .string()
    .refine((type) => !(modelledPartTypes as readonly string[]).includes(type), 'modelled part type')
    .transform((type) => type as OtherPartType),
})
export type OtherPart = z.infer<typeof OtherPartSchema>

/** A message part. A malformed modelled part fails; a part of an unknown type passes as {@link OtherPart}. */
export const PartSchema = z.union([
  z.discriminatedUnion('type', [
    TextPartSchema,
    ReasoningPartSchema,
    ToolPartSchema,
    StepStartPartSchema,
    StepFinishPartSchema,
    PatchPartSchema,
  ]),
  OtherPartSchema,
])
export type Part = z.infer<typeof PartSchema>

/** A message with its parts, as `GET /session/{id}/message[/{messageID}]` returns it. */
export const MessageSchema = z.looseObject({ info: MessageInfoSchema, parts: z.array(PartSchema) })
export type Message = z.infer<typeof MessageSchema>

/** A pending permission ask (`GET /permission`, `permission.asked`). */
export const PermissionRequestSchema = z.looseObject({
  id: z.string(),
  sessionID: z.string(),
  permission: z.string(),
  patterns: z.array(z.string()),
  metadata: metadata.optional(),
  always: z.array(z.string()).optional(),
  // null for asks the runtime raises outside a tool call (measured: `doom_loop` after three
  // identical calls of an unavailable tool). One such ask must not make the whole list unreadable.
  tool: z.looseObject({ messageID: z.string(), callID: z.string() }).nullish(),
})
export type PermissionRequest = z.infer<typeof PermissionRequestSchema>

/** One question of a question request. */
export const QuestionInfoSchema = z.looseObject({
  question: z.string(),
  header: z.string(),
  options: z.array(z.looseObject({ label: z.string(), description: z.string() })),
  multiple: z.boolean().optional(),
  custom: z.boolean().optional(),
})
export type QuestionInfo = z.infer<typeof QuestionInfoSchema>

/** A pending question request (`GET /question`, `question.asked`). */
export const QuestionRequestSchema = z.looseObject({
  id: z.string(),
  sessionID: z.string(),
  questions: z.array(QuestionInfoSchema),
  tool: z.looseObject({ messageID: z.string(), callID: z.string() }).nullish(),
})
export type QuestionRequest = z.infer<typeof QuestionRequestSchema>

/** One todo item of a session. `status`: pending, in_progress, completed, cancelled. */
export const TodoSchema = z.looseObject({ content: z.string(), status: z.string(), priority: z.string() })
export type Todo = z.infer<typeof TodoSchema>

/** A runtime configuration document (global or merged); opaque to this client. */
export const ConfigSchema = z.looseObject({})
export type Config = z.infer<typeof ConfigSchema>

/** `GET /provider`: every known provider, the default model per provider, connected ids. */
export const ProviderListSchema = z.looseObject({
  all: z.array(
    z.looseObject({ id: z.string(), name: z.string(), models: z.record(z.string(), z.unknown()) }),
  ),
  default: z.record(z.string(), z.string()),
  connected: z.array(z.string()),
})
export type ProviderList = z.infer<typeof ProviderListSchema>

/**
 * `GET /config/providers`: the providers the runtime can use (what `GET /provider` calls
 * `connected`, with their models) and each one's default model; kilobytes where `GET /provider`
 * carries the whole catalog (6.4 MB measured on 1.18.33 with no provider configured).
 */
export const ConfiguredProvidersSchema = z.looseObject({
  providers: z.array(z.looseObject({ id: z.string() })),
  default: z.record(z.string(), z.string()),
})
export type ConfiguredProviders = z.infer<typeof ConfiguredProvidersSchema>

/** An agent profile (`GET /agent`). 1.18.33 sends `null` for some unset flags (measured). */
export const AgentSchema = z.looseObject({
  name: z.string(),
  mode: z.enum(['subagent', 'primary', 'all']),
  description: z.string().nullish(),
  native: z.boolean().nullish(),
  hidden: z.boolean().nullish(),
  permission: z
    .array(z.looseObject({ permission: z.string(), pattern: z.string(), action: z.string() }))
    .optional(),
})
export type Agent = z.infer<typeof AgentSchema>

/** `GET /global/health`. */
export const HealthSchema = z.looseObject({ healthy: z.boolean(), version: z.string() })
export type Health = z.infer<typeof HealthSchema>

/** The runtime's plain `true`/`false` answers (delete, abort, replies, auth). */
export const BooleanResultSchema = z.boolean()

const event = <T extends string, P extends z.ZodType>(type: T, properties: P) =>
  z.looseObject({ id: z.string().optional(), type: z.literal(type), properties })

const requestReply = { sessionID: z.string(), requestID: z.string() }

/**
 * The events of one session that the client delivers to `events.onSession` subscribers. Every one
 * carries `properties.sessionID`. Other event types (deltas, plugin, catalog, …) never reach them.
 */
export const SessionEventSchema = z.discriminatedUnion('type', [
  event('session.status', z.looseObject({ sessionID: z.string(), status: SessionStatusSchema })),
  event('session.idle', z.looseObject({ sessionID: z.string() })),
  event('session.error', z.looseObject({ sessionID: z.string(), error: MessageErrorSchema.optional() })),
  event('session.updated', z.looseObject({ sessionID: z.string(), info: SessionSchema })),
  event('session.deleted', z.looseObject({ sessionID: z.string(), info: SessionSchema })),
  event('message.updated', z.looseObject({ sessionID: z.string(), info: MessageInfoSchema })),
  event('message.part.updated', z.looseObject({ sessionID: z.string(), part: PartSchema })),
  event('permission.asked', PermissionRequestSchema),
  event(
    'permission.replied',
    z.looseObject({ ...requestReply, reply: z.enum(['once', 'always', 'reject']) }),
  ),
  event('question.asked', QuestionRequestSchema),
  event('question.replied', z.looseObject({ ...requestReply, answers: z.array(z.array(z.string())) })),
  event('question.rejected', z.looseObject(requestReply)),
  event('todo.updated', z.looseObject({ sessionID: z.string(), todos: z.array(TodoSchema) })),
])
export type SessionEvent = z.infer<typeof SessionEventSchema>
/** The `type` of every {@link SessionEvent}. */
export type SessionEventType = SessionEvent['type']

/** The envelope of every event on `GET /event`: `data: {id?, type, properties}`. */
export const RawEventSchema = z.looseObject({
  id: z.string().optional(),
  type: z.string(),
  properties: z.unknown().optional(),
})
export type RawEvent = z.infer<typeof RawEventSchema>
