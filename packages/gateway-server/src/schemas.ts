import {
  DEFAULT_SEARCH_LIMIT,
  MAX_PATH_LENGTH,
  MAX_QUERY_LENGTH,
  MAX_SEARCH_LIMIT,
} from '@sallyport/workspace-guard'
import { z } from 'zod'

// Tool input and output schemas. Bounds are the spec's Limits table and DESIGN.md's tool surface.

const handle = z.string().min(1).max(4096)

/** Longest answer string of a question reply, and longest note sent with a permission decision. */
export const MAX_ANSWER_LENGTH = 2000
export const MAX_NOTE_LENGTH = 1000
const waitMs = z.number().int().min(0).max(30_000)

export const AgentRunInput = z
  .object({
    message: z.string().min(1).max(32_000).describe('What the agent should do (1-32000 characters).'),
    session: handle.optional().describe('A session handle to resume; omit to start a new session.'),
    title: z.string().min(1).max(160).optional().describe('Title of a new session (1-160 characters).'),
    waitMs: waitMs
      .optional()
      .describe('Wait up to this many milliseconds (0-30000) for the run to finish or need input.'),
  })
  .strict()

export const JobGetInput = z
  .object({ job: handle.describe('A job handle from gateway.agent.run.'), waitMs: waitMs.optional() })
  .strict()
export const JobCancelInput = z
  .object({ job: handle.describe('A job handle from gateway.agent.run.') })
  .strict()

/** `gateway.session.list` page sizes: the default and the largest a caller may ask for. */
export const SESSION_PAGE_DEFAULT = 20
export const SESSION_PAGE_MAX = 100

export const SessionListInput = z
  .object({
    limit: z
      .number()
      .int()
      .min(1)
      .max(SESSION_PAGE_MAX)
      .optional()
      .describe(`Page size, 1-${SESSION_PAGE_MAX} (default ${SESSION_PAGE_DEFAULT}).`),
    cursor: z.string().min(1).max(200).optional().describe('nextCursor of the previous page.'),
  })
  .strict()

export const SESSION_VIEWS = ['messages', 'diff', 'todos'] as const
export const SessionGetInput = z
  .object({
    session: handle,
    include: z
      .array(z.enum(SESSION_VIEWS))
      .max(3)
      .optional()
      .describe('Views to include: messages, diff, todos.'),
  })
  .strict()
export const SessionForkInput = z
  .object({
    session: handle,
    message: handle.optional().describe('Fork before this message (a message handle).'),
  })
  .strict()
export const SessionDeleteInput = z.object({ session: handle }).strict()

export const WorkspaceSearchInput = z
  .object({
    mode: z.enum(['files', 'text', 'symbols']),
    query: z.string().min(1).max(MAX_QUERY_LENGTH),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_SEARCH_LIMIT)
      .optional()
      .describe(`At most this many matches, 1-${MAX_SEARCH_LIMIT} (default ${DEFAULT_SEARCH_LIMIT}).`),
  })
  .strict()
export const WorkspaceReadInput = z
  .object({ path: z.string().min(1).max(MAX_PATH_LENGTH).describe('A path relative to the workspace root.') })
  .strict()

export const InteractionRespondInput = z
  .object({
    interaction: handle,
    decision: z
      .enum(['once', 'always', 'reject'])
      .optional()
      .describe('For a permission: once, always (full only) or reject.'),
    answers: z
      .array(z.array(z.string().min(1).max(MAX_ANSWER_LENGTH)).max(20))
      .max(20)
      .optional()
      .describe('For a question: one array of chosen labels (or custom text) per question.'),
    message: z
      .string()
      .min(1)
      .max(MAX_NOTE_LENGTH)
      .optional()
      .describe('Optional note sent with a permission decision.'),
  })
  .strict()

export const CatalogGetInput = z.object({}).strict()

// ---- outputs ----

export const JOB_STATES = ['running', 'input_required', 'completed', 'failed', 'cancelled'] as const

const QuestionInteraction = z.object({
  kind: z.literal('question'),
  interaction: z.string(),
  questions: z.array(
    z.object({
      header: z.string(),
      question: z.string(),
      options: z.array(z.object({ label: z.string(), description: z.string() })),
      multiple: z.boolean().optional(),
      custom: z.boolean().optional(),
    }),
  ),
})
const PermissionInteraction = z.object({
  kind: z.literal('permission'),
  interaction: z.string(),
  permission: z.string(),
  patterns: z.array(z.string()),
  allowedDecisions: z.array(z.enum(['once', 'always', 'reject'])),
  /** With `always` allowed: what an `always` answer approves until the runtime restarts (wider than `patterns`). */
  alwaysPatterns: z.array(z.string()).optional(),
})
export const Interaction = z.discriminatedUnion('kind', [QuestionInteraction, PermissionInteraction])
export type Interaction = z.infer<typeof Interaction>

export const Todo = z.object({ content: z.string(), status: z.string(), priority: z.string().optional() })
export const ChangedFile = z.object({
  file: z.string(),
  status: z.string().optional(),
  additions: z.number(),
  deletions: z.number(),
})
export const Usage = z.object({
  cost: z.number(),
  input: z.number(),
  output: z.number(),
  reasoning: z.number(),
  cacheRead: z.number(),
  cacheWrite: z.number(),
})

/**
 * While a job is `running` and the runtime retries a failed model request: which attempt failed,
 * when it tries again, and the provider's message (keys, tokens and host paths removed).
 */
export const RetryState = z.object({
  attempt: z.number().int(),
  /** ISO time; absent when the runtime gave none that reads as a time. */
  nextRetryAt: z.string().optional(),
  message: z.string().optional(),
})
export type RetryState = z.infer<typeof RetryState>

export const JobStatus = z.object({
  status: z.enum(JOB_STATES),
  session: z.string(),
  job: z.string(),
  /** Only with `running`: the runtime is retrying a failed model request (see {@link RetryState}). */
  retry: RetryState.optional(),
  text: z.string().optional(),
  error: z.object({ name: z.string(), message: z.string() }).optional(),
  interactions: z.array(Interaction).optional(),
  changedFiles: z.array(ChangedFile).optional(),
  todos: z.array(Todo).optional(),
  usage: Usage.optional(),
})
export type JobStatus = z.infer<typeof JobStatus>

export const SessionSummary = z.object({
  session: z.string(),
  title: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  status: z.enum(['idle', 'busy', 'retry']),
  parent: z.string().optional(),
  summary: z.object({ additions: z.number(), deletions: z.number(), files: z.number() }).optional(),
})
export type SessionSummary = z.infer<typeof SessionSummary>

export const MessageView = z.object({
  message: z.string(),
  role: z.enum(['user', 'assistant']),
  createdAt: z.string(),
  completedAt: z.string().optional(),
  text: z.string(),
  tools: z.array(z.object({ tool: z.string(), status: z.string(), title: z.string().optional() })).optional(),
  error: z.object({ name: z.string(), message: z.string() }).optional(),
})
export type MessageView = z.infer<typeof MessageView>

export const SessionList = z.object({ sessions: z.array(SessionSummary), nextCursor: z.string().optional() })
export const SessionGet = z.object({
  session: SessionSummary,
  /** The handle of the job the session is running, while it runs one. */
  activeJob: z.string().optional(),
  /** While the session's status is `retry`: the failed model request the runtime retries. */
  retry: RetryState.optional(),
  messages: z.array(MessageView).optional(),
  diff: z.array(ChangedFile.extend({ patch: z.string().optional() })).optional(),
  todos: z.array(Todo).optional(),
})
export const SessionFork = z.object({ session: SessionSummary })
export const SessionDelete = z.object({ deleted: z.literal(true) })
export const JobCancel = z.object({ status: z.literal('cancelled'), session: z.string(), job: z.string() })
export const InteractionRespond = z.object({
  accepted: z.literal(true),
  kind: z.enum(['question', 'permission']),
})
export const WorkspaceSearch = z.object({
  matches: z.array(
    z.object({
      path: z.string(),
      line: z.number().optional(),
      column: z.number().optional(),
      preview: z.string().optional(),
      kind: z.string().optional(),
      name: z.string().optional(),
    }),
  ),
  truncated: z.boolean(),
})
export const WorkspaceRead = z.object({
  path: z.string(),
  text: z.string(),
  mimeType: z.string(),
  truncated: z.literal(false),
})
export const Catalog = z.object({
  service: z.string(),
  policy: z.enum(['chat', 'read', 'full']),
  principal: z.string(),
  tools: z.array(z.string()),
  resources: z.array(z.string()),
  prompts: z.array(z.string()),
})
