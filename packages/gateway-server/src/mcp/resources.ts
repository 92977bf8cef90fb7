import type { WorkspaceGuard } from '@agentgate/workspace-guard'
import {
  type McpServer,
  ProtocolError,
  ResourceNotFoundError,
  ResourceTemplate,
} from '@modelcontextprotocol/server'
import { toGatewayError } from '../error-mapping.js'
import { type JobContext, jobStatus } from '../jobs/job-status.js'
import type { AuditRecord } from '../logger.js'
import { messageViews, sessionDiff, todoViews } from '../sessions/views.js'

export interface ResourceContext extends JobContext {
  guard: WorkspaceGuard
  audit: AuditRecord
}

const INVALID_PARAMS = -32602

type TextContents = { contents: Array<{ uri: string; mimeType: string; text: string }> }

/**
 * Registers the resource templates this policy may read (policy `resourceTemplatesFor`). Every
 * read opens the handle again (AES-GCM, identity, expiry), verifies the session's ownership
 * record and, for workspace files, runs the guard: nothing is cached between reads.
 */
export function registerResources(
  server: McpServer,
  ctx: ResourceContext,
  allowed: ReadonlySet<string>,
): void {
  const { owned, runtime, redactor } = ctx
  const json = (uri: URL, value: unknown): TextContents => ({
    contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value) }],
  })
  const read =
    (name: string, fn: (uri: URL, vars: Record<string, string>) => Promise<TextContents>) =>
    async (uri: URL, variables: Record<string, string | string[]>): Promise<TextContents> => {
      ctx.audit.tool = name
      const vars = Object.fromEntries(
        Object.entries(variables).map(([k, v]) => [k, Array.isArray(v) ? v.join('/') : v]),
      )
      try {
        const result = await fn(uri, vars)
        ctx.audit.toolOutcome = 'ok'
        return result
      } catch (error) {
        const mapped = toGatewayError(error)
        ctx.audit.toolOutcome = 'error'
        ctx.audit.errorCode = mapped.code
        if (
          mapped.code === 'not_found' ||
          mapped.code === 'handle_invalid' ||
          mapped.code === 'handle_expired'
        ) {
          throw new ResourceNotFoundError(uri.href, mapped.message)
        }
        throw new ProtocolError(INVALID_PARAMS, mapped.message, { code: mapped.code })
      }
    }

  const sessionView = (view: 'messages' | 'diff' | 'todos') =>
    read(`gateway.session.${view}`, async (uri, { session: handle = '' }) => {
      const session = await owned.openSession(decodeURIComponent(handle))
      if (view === 'todos') return json(uri, { todos: todoViews(redactor, await runtime.todos(session.id)) })
      const messages = await runtime.messages(session.id)
      if (view === 'messages')
        return json(uri, { messages: await messageViews(owned, redactor, session.id, messages) })
      return json(uri, { diff: await sessionDiff(runtime, redactor, session.id, messages) })
    })

  const templates: Array<[string, string, string, ReturnType<typeof read>]> = [
    [
      'gateway.session.messages',
      'gateway://sessions/{session}/messages',
      'Messages of one of your sessions',
      sessionView('messages'),
    ],
    [
      'gateway.session.diff',
      'gateway://sessions/{session}/diff',
      'Files changed in one of your sessions',
      sessionView('diff'),
    ],
    [
      'gateway.session.todos',
      'gateway://sessions/{session}/todos',
      "The agent's todo list of one of your sessions",
      sessionView('todos'),
    ],
    [
      'gateway.job',
      'gateway://jobs/{job}',
      'Status of one of your jobs',
      read('gateway.job', async (uri, { job = '' }) => {
        const ref = await owned.openJob(decodeURIComponent(job))
        return json(uri, await jobStatus(ctx, ref.session, ref))
      }),
    ],
  ]
  {
    const guard = ctx.guard
    templates.push([
      'gateway.workspace.file',
      'gateway://workspace/{+path}',
      'A UTF-8 text file of the workspace (at most 256 KiB)',
      read('gateway.workspace.file', async (uri, { path = '' }) => {
        const file = await guard.read(decodeURIComponent(path))
        return { contents: [{ uri: uri.href, mimeType: file.mimeType, text: file.text }] }
      }),
    ])
  }
  for (const [name, template, description, callback] of templates) {
    if (!allowed.has(name) && !allowed.has(template)) continue
    server.registerResource(
      name,
      new ResourceTemplate(template, { list: undefined }),
      { description, mimeType: name === 'gateway.workspace.file' ? 'text/plain' : 'application/json' },
      callback,
    )
  }
}
