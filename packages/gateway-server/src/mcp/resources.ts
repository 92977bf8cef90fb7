import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/server'
import type { ResourceTemplate as PolicyTemplate, ResourceTemplateName } from '@sallyport/policy'
import { DEFAULT_MAX_BYTES, type WorkspaceGuard } from '@sallyport/workspace-guard'
import { resourceError, toGatewayError } from '../error-mapping.js'
import { GatewayError } from '../errors.js'
import { meteredCall } from '../fairness.js'
import type { AuditBook } from '../http/audit.js'
import { type CredentialLimiter, RateLimited } from '../http/limits.js'
import { type JobContext, jobStatus } from '../jobs/job-status.js'
import { messageViews, sessionDiff, todoViews } from '../sessions/views.js'

export interface ResourceContext extends JobContext {
  guard: WorkspaceGuard
  audit: AuditBook
  /**
   * The credential's limits: a read holds a call slot (`concurrentCalls`), and what it takes
   * from the runtime counts against the rate by size (`readBytesPerOperation`). Absent: none.
   */
  limiter?: Pick<CredentialLimiter, 'acquire' | 'reserveRead' | 'chargeRead'>
}

/** A URI variable's value; a malformed `%` escape is the caller's invalid input. */
function decode(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    throw new GatewayError('invalid_input', 'The resource URI is not valid (malformed percent-encoding).')
  }
}

const JSON_TYPE = 'application/json'

type TextContents = { contents: Array<{ uri: string; mimeType: string; text: string }> }

type ReadCallback = (
  uri: URL,
  variables: Record<string, string | string[]>,
  extra: { mcpReq: { id: unknown } },
) => Promise<TextContents>

/** What the gateway serves for one resource template of the policy table. */
interface ResourceServing {
  description: string
  mimeType: string
  read: ReadCallback
}

// Parsed URI templates, shared by every request's server: a template holds no per-request state
// (its only callback, `list`, is absent), and parsing one on every request costs more than the
// registration itself.
const parsedTemplates = new Map<string, ResourceTemplate>()
function parsedTemplate(uriTemplate: string): ResourceTemplate {
  let template = parsedTemplates.get(uriTemplate)
  if (template === undefined) {
    template = new ResourceTemplate(uriTemplate, { list: undefined })
    parsedTemplates.set(uriTemplate, template)
  }
  return template
}

/**
 * Registers the resource templates this policy may read (policy `resourceTemplatesFor`: their
 * names and URI templates). Every read opens the handle again (AES-GCM, identity, expiry),
 * verifies the session's ownership record and, for workspace files, runs the guard: nothing is
 * cached between reads.
 */
export function registerResources(
  server: McpServer,
  ctx: ResourceContext,
  templates: readonly PolicyTemplate[],
): void {
  const { owned, runtime, redactor } = ctx
  const json = (uri: URL, value: unknown): TextContents => ({
    contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(value) }],
  })
  const read =
    (
      name: ResourceTemplateName,
      fn: (uri: URL, vars: Record<string, string>) => Promise<TextContents>,
    ): ReadCallback =>
    async (uri, variables, extra) => {
      const audit = ctx.audit.claim(extra.mcpReq.id, 'resources/read')
      audit.tool = name
      const vars = Object.fromEntries(
        Object.entries(variables).map(([k, v]) => [k, Array.isArray(v) ? v.join('/') : v]),
      )
      const { limiter } = ctx
      const username = ctx.principal.username
      let release: (() => void) | undefined
      try {
        release = limiter?.acquire(username, 'call')
        const reserved = limiter?.reserveRead(username) ?? 0
        // What the read takes from the runtime counts against its credential's rate, by size.
        const result = await meteredCall(
          (bytes) => limiter?.chargeRead(username, bytes, reserved),
          () => fn(uri, vars),
        )
        audit.outcome = 'ok'
        return result
      } catch (error) {
        if (error instanceof RateLimited) {
          audit.outcome = 'refused'
          audit.errorCode = 'rate_limited'
          throw resourceError(new GatewayError('rate_limited', error.message), uri, error.retryAfterMs)
        }
        const mapped = toGatewayError(error)
        // A URI that is not valid (a malformed escape) is refused before any read, like invalid
        // tool input.
        audit.outcome = mapped.code === 'invalid_input' ? 'refused' : 'error'
        audit.errorCode = mapped.code
        throw resourceError(mapped, uri)
      } finally {
        release?.()
      }
    }

  const sessionView = (view: 'messages' | 'diff' | 'todos') =>
    read(`gateway.session.${view}`, async (uri, { session: handle = '' }) => {
      const session = await owned.openSession(decode(handle))
      if (view === 'todos') return json(uri, { todos: todoViews(redactor, await runtime.todos(session.id)) })
      const messages = await runtime.messages(session.id)
      if (view === 'messages')
        return json(uri, { messages: await messageViews(owned, redactor, session.id, messages) })
      return json(uri, { diff: await sessionDiff(runtime, redactor, session.id, messages) })
    })

  // Keyed by the policy's template names: a template missing here, or a misspelt name, fails to
  // compile. The URI templates themselves come from the policy table.
  const serving: Record<ResourceTemplateName, ResourceServing> = {
    'gateway.session.messages': {
      description: 'Messages of one of your sessions',
      mimeType: JSON_TYPE,
      read: sessionView('messages'),
    },
    'gateway.session.diff': {
      description: 'Files changed in one of your sessions',
      mimeType: JSON_TYPE,
      read: sessionView('diff'),
    },
    'gateway.session.todos': {
      description: "The agent's todo list of one of your sessions",
      mimeType: JSON_TYPE,
      read: sessionView('todos'),
    },
    'gateway.job': {
      description: 'Status of one of your jobs',
      mimeType: JSON_TYPE,
      read: read('gateway.job', async (uri, { job = '' }) => {
        const ref = await owned.openJob(decode(job))
        return json(uri, await jobStatus(ctx, ref.session, ref))
      }),
    },
    'gateway.workspace.file': {
      description: `A UTF-8 text file of the workspace (at most ${DEFAULT_MAX_BYTES / 1024} KiB)`,
      mimeType: 'text/plain',
      read: read('gateway.workspace.file', async (uri, { path = '' }) => {
        const file = await ctx.guard.read(decode(path))
        return { contents: [{ uri: uri.href, mimeType: file.mimeType, text: file.text }] }
      }),
    },
  }
  for (const { name, uriTemplate } of templates) {
    const { description, mimeType, read: callback } = serving[name]
    server.registerResource(name, parsedTemplate(uriTemplate), { description, mimeType }, callback)
  }
}
