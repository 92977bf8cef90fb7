import { McpServer, type McpServerFactory } from '@modelcontextprotocol/server'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv'
import type { HandleCodec } from '@sallyport/handles'
import { promptsFor, resourceTemplatesFor, type ToolName, toolsFor } from '@sallyport/policy'
import type { WorkspaceGuard } from '@sallyport/workspace-guard'
import { requestScopeOf } from '../http/app.js'
import type { AuditBook } from '../http/audit.js'
import { createRunEventMeter } from '../jobs/run-events.js'
import type { Logger } from '../logger.js'
import type { Redactor } from '../redact.js'
import type { RuntimePort } from '../runtime/port.js'
import type { ScreeningHook } from '../screening.js'
import { type OwnershipSignerLike, ownedSessions } from '../sessions/owned.js'
import { catalogTool } from '../tools/catalog.js'
import { interactionRespondTool } from '../tools/interaction.js'
import { agentRunTool, jobCancelTool, jobGetTool } from '../tools/jobs.js'
import { sessionDeleteTool, sessionForkTool, sessionGetTool, sessionListTool } from '../tools/sessions.js'
import { workspaceReadTool, workspaceSearchTool } from '../tools/workspace.js'
import { defineTool, type ToolDefinition } from './define-tool.js'
import { registerPrompts } from './prompts.js'
import { registerResources } from './resources.js'

export interface ServerFactoryOptions {
  codec: HandleCodec
  signer: OwnershipSignerLike
  runtime: RuntimePort
  guard: WorkspaceGuard
  screening: ScreeningHook
  /** The gateway's one redactor: every string relayed from the runtime goes through it. */
  redactor: Redactor
  logger: Logger
  version: string
  now?: () => number
}

// biome-ignore lint/suspicious/noExplicitAny: heterogeneous tool definitions, each typed where it is made
type AnyToolDefinition = ToolDefinition<any, any>

/** What every tool of a request is made from (one credential's, one request's). */
type ToolBase = Parameters<typeof agentRunTool>[0] & Parameters<typeof sessionListTool>[0]

// Keyed by the policy's tool names: a tool missing here, or a misspelt name, fails to compile.
// Each request builds only the tools it registers.
const TOOLS: Readonly<Record<ToolName, (base: ToolBase, guard: WorkspaceGuard) => AnyToolDefinition>> = {
  'gateway.agent.run': (base) => agentRunTool(base),
  'gateway.job.get': (base) => jobGetTool(base),
  'gateway.job.cancel': (base) => jobCancelTool(base),
  'gateway.session.list': (base) => sessionListTool(base),
  'gateway.session.get': (base) => sessionGetTool(base),
  'gateway.session.fork': (base) => sessionForkTool(base),
  'gateway.session.delete': (base) => sessionDeleteTool(base),
  'gateway.workspace.search': (_, guard) => workspaceSearchTool(guard),
  'gateway.workspace.read': (_, guard) => workspaceReadTool(guard),
  'gateway.interaction.respond': (base) => interactionRespondTool(base),
  'gateway.catalog.get': (base) => catalogTool(base.principal),
}

/**
 * The names of the tools a request calls, when it is made of tool calls only (one, or a batch of
 * them); `undefined` when it asks anything else (a list, a read, a handshake, a GET), which then
 * needs the whole catalog. A name the gateway does not know is `unknown` here and matches nothing.
 */
function calledTools(book: AuditBook): ReadonlySet<string> | undefined {
  const names = new Set<string>()
  for (const op of book.operations) {
    if (op.rpcMethod !== 'tools/call' || op.tool === undefined) return undefined
    names.add(op.tool)
  }
  return names
}

const INSTRUCTIONS =
  'sallyport runs a coding agent for you. Start with gateway.agent.run, follow the job with gateway.job.get (waitMs waits), answer questions and permission requests with gateway.interaction.respond (or in the form dialogs a waiting call shows, if your client supports MCP 2026-07-28 elicitation), and read results with gateway.session.get. Handles are opaque: pass them back exactly as received.'

/**
 * The per-request MCP server factory. The tools, resources and prompts registered are exactly
 * those of the caller's policy (for a request of tool calls only, those it calls), so a hidden
 * tool is indistinguishable from an unknown one. What does not depend on the request is made
 * once and shared: one JSON-schema validator, each tool's JSON schemas (`define-tool.ts`), the
 * parsed resource templates (`resources.ts`).
 */
export function createServerFactory(options: ServerFactoryOptions): McpServerFactory {
  const validator = new AjvJsonSchemaValidator()
  const starting = new Set<string>()
  const runEvents = createRunEventMeter(options.runtime)
  return (ctx) => {
    const scope = requestScopeOf(ctx.authInfo)
    // The HTTP layer authenticates before any instance is built; reaching here without a
    // principal is a wiring bug and must not serve anything.
    if (!scope) throw new Error('unauthenticated MCP request reached the server factory')
    const { principal } = scope
    const server = new McpServer(
      { name: 'sallyport', version: options.version },
      {
        jsonSchemaValidator: validator,
        instructions: INSTRUCTIONS,
        // A credential's catalog is fixed by its policy: the lists never change during a session.
        capabilities: {
          tools: { listChanged: false },
          resources: { listChanged: false },
          prompts: { listChanged: false },
        },
        // Forms are offered to 2026-07-28 clients only (jobs/input-rounds.ts); a 2025-era call
        // never gets an input_required result, and must fail loudly rather than be turned into
        // server-to-client requests if one ever slipped through.
        inputRequired: { legacyShim: false },
      },
    )
    const owned = ownedSessions(principal, options.codec, options.signer, options.runtime)
    const base: ToolBase = {
      principal,
      runtime: options.runtime,
      owned,
      redactor: options.redactor,
      screening: options.screening,
      starting,
      ...(runEvents && { runEvents }),
      logger: options.logger,
      ...(options.now && { now: options.now }),
    }
    const guard = options.guard
    // The policy's tables decide what is registered, in catalog order; a request made only of
    // tool calls gets only the tools it calls (of those), as nothing else can be reached by it.
    const called = calledTools(scope.audit)
    const toolScope = { ...scope, era: ctx.era }
    for (const name of toolsFor(principal.policy)) {
      if (called === undefined || called.has(name))
        defineTool(server, toolScope, options.logger, name, TOOLS[name](base, guard))
    }
    if (called !== undefined) return server
    registerResources(
      server,
      {
        ...base,
        guard,
        audit: scope.audit,
        limiter: scope.limiter,
      },
      resourceTemplatesFor(principal.policy),
    )
    registerPrompts(server, promptsFor(principal.policy))
    return server
  }
}
