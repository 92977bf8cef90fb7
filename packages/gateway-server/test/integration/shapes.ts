import { z } from 'zod'

// The tool output shapes exactly as DESIGN.md "The tool surface" fixes them, written here
// independently of `src/schemas.ts` and strict, so a field the design does not list (an upstream
// id, an ownership proof, an internal flag) fails the test.

export const HANDLE = /^v1\.[A-Za-z0-9_-]+$/
const handle = z.string().regex(HANDLE)
const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)) && s.endsWith('Z'), 'ISO date')

export const ChangedFileShape = z.strictObject({
  file: z.string(),
  status: z.string().optional(),
  additions: z.number(),
  deletions: z.number(),
})
export const TodoShape = z.strictObject({
  content: z.string(),
  status: z.string(),
  priority: z.string().optional(),
})
export const UsageShape = z.strictObject({
  cost: z.number(),
  input: z.number(),
  output: z.number(),
  reasoning: z.number(),
  cacheRead: z.number(),
  cacheWrite: z.number(),
})
export const QuestionInteractionShape = z.strictObject({
  kind: z.literal('question'),
  interaction: handle,
  questions: z.array(
    z.strictObject({
      header: z.string(),
      question: z.string(),
      options: z.array(z.strictObject({ label: z.string(), description: z.string() })),
      multiple: z.boolean().optional(),
      custom: z.boolean().optional(),
    }),
  ),
})
export const PermissionInteractionShape = z.strictObject({
  kind: z.literal('permission'),
  interaction: handle,
  permission: z.string(),
  patterns: z.array(z.string()),
  allowedDecisions: z.array(z.enum(['once', 'always', 'reject'])),
  alwaysPatterns: z.array(z.string()).optional(),
})
/** Added for a first run without a provider: the runtime retrying a failed model request. */
export const RetryStateShape = z.strictObject({
  attempt: z.number().int(),
  nextRetryAt: isoDate.optional(),
  message: z.string().max(300).optional(),
})

export const JobStatusShape = z.strictObject({
  status: z.enum(['running', 'input_required', 'completed', 'failed', 'cancelled']),
  session: handle,
  job: handle,
  retry: RetryStateShape.optional(),
  text: z.string().optional(),
  error: z.strictObject({ name: z.string(), message: z.string() }).optional(),
  interactions: z.array(z.union([QuestionInteractionShape, PermissionInteractionShape])).optional(),
  changedFiles: z.array(ChangedFileShape).optional(),
  todos: z.array(TodoShape).optional(),
  usage: UsageShape.optional(),
})
export type JobStatusShape = z.infer<typeof JobStatusShape>

export const SessionSummaryShape = z.strictObject({
  session: handle,
  title: z.string(),
  createdAt: isoDate,
  updatedAt: isoDate,
  status: z.enum(['idle', 'busy', 'retry']),
  parent: handle.optional(),
  summary: z.strictObject({ additions: z.number(), deletions: z.number(), files: z.number() }).optional(),
})
export const MessageViewShape = z.strictObject({
  message: handle,
  role: z.enum(['user', 'assistant']),
  createdAt: isoDate,
  completedAt: isoDate.optional(),
  text: z.string(),
  tools: z
    .array(z.strictObject({ tool: z.string(), status: z.string(), title: z.string().optional() }))
    .optional(),
  error: z.strictObject({ name: z.string(), message: z.string() }).optional(),
})
export const DiffEntryShape = ChangedFileShape.extend({ patch: z.string().optional() })
export const SessionListShape = z.strictObject({
  sessions: z.array(SessionSummaryShape),
  nextCursor: z.string().optional(),
})
export const SessionGetShape = z.strictObject({
  session: SessionSummaryShape,
  /** Added beyond DESIGN.md: the running job's handle, for a client that lost it. */
  activeJob: handle.optional(),
  retry: RetryStateShape.optional(),
  messages: z.array(MessageViewShape).optional(),
  diff: z.array(DiffEntryShape).optional(),
  todos: z.array(TodoShape).optional(),
})
export const SessionForkShape = z.strictObject({ session: SessionSummaryShape })
export const SessionDeleteShape = z.strictObject({ deleted: z.literal(true) })
export const JobCancelShape = z.strictObject({ status: z.literal('cancelled'), session: handle, job: handle })
export const InteractionRespondShape = z.strictObject({
  accepted: z.literal(true),
  kind: z.enum(['question', 'permission']),
})
export const WorkspaceSearchShape = z.strictObject({
  matches: z.array(
    z.strictObject({
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
export const WorkspaceReadShape = z.strictObject({
  path: z.string(),
  text: z.string(),
  mimeType: z.string(),
  truncated: z.literal(false),
})
export const CatalogShape = z.strictObject({
  service: z.string(),
  policy: z.enum(['chat', 'read', 'full']),
  principal: z.string(),
  tools: z.array(z.string()),
  resources: z.array(z.string()),
  prompts: z.array(z.string()),
})

/** Parses `value` with `shape` and fails the test with the zod issues when it does not match. */
export function expectShape<S extends z.ZodType>(shape: S, value: unknown): z.infer<S> {
  const parsed = shape.safeParse(value)
  if (!parsed.success) {
    throw new Error(
      `value does not match the DESIGN.md shape:\n${z.prettifyError(parsed.error)}\n${JSON.stringify(value)}`,
    )
  }
  return parsed.data
}

export const CHAT_TOOLS = [
  'gateway.agent.run',
  'gateway.catalog.get',
  'gateway.interaction.respond',
  'gateway.job.cancel',
  'gateway.job.get',
  'gateway.session.get',
  'gateway.session.list',
]
export const READ_TOOLS = [...CHAT_TOOLS, 'gateway.workspace.read', 'gateway.workspace.search'].sort()
export const FULL_TOOLS = [...READ_TOOLS, 'gateway.session.delete', 'gateway.session.fork'].sort()
export const TOOLS_OF = { chat: CHAT_TOOLS, read: READ_TOOLS, full: FULL_TOOLS } as const

export const SESSION_TEMPLATES = [
  'gateway://jobs/{job}',
  'gateway://sessions/{session}/diff',
  'gateway://sessions/{session}/messages',
  'gateway://sessions/{session}/todos',
]
export const WORKSPACE_TEMPLATE = 'gateway://workspace/{+path}'
export const PROMPTS = ['gateway.debug', 'gateway.explain', 'gateway.implement', 'gateway.review']
