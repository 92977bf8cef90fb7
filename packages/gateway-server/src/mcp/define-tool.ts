import type { McpServer, StandardSchemaWithJSON } from '@modelcontextprotocol/server'
import type { z } from 'zod'
import { errorResult, toGatewayError } from '../error-mapping.js'
import { GatewayError } from '../errors.js'
import type { AuditRecord, Logger } from '../logger.js'

/** MCP tool annotations: hints for clients; the gateway itself enforces policy. */
export interface ToolHints {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint: boolean
}

/** Hints of a tool that only reads gateway-owned state. */
export const READ_ONLY_HINTS: ToolHints = Object.freeze({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
})

export interface ToolDefinition<I extends z.ZodObject, O extends z.ZodObject> {
  name: string
  title: string
  description: string
  input: I
  output: O
  hints: ToolHints
  run: (input: z.output<I>, signal: AbortSignal) => Promise<z.output<O>>
  /** Short human-readable rendering for clients that only show text content. */
  render?: (output: z.output<O>) => string
}

/**
 * Registers one gateway tool: structured output plus a text rendering, errors as `isError`
 * results with a stable code, and the audit fields of this exchange filled in.
 */
/**
 * The tool's JSON schema as clients see it, with a validation step that lets every value
 * through: the SDK would otherwise answer invalid input with its own untyped text before our
 * wrapper runs. The wrapper validates with the real schema and answers `invalid_input`.
 */
function advertiseOnly(schema: z.ZodObject): StandardSchemaWithJSON {
  const standard = (schema as unknown as StandardSchemaWithJSON)['~standard']
  return {
    '~standard': {
      version: 1,
      vendor: 'agentgate',
      validate: (value: unknown) => ({ value }),
      jsonSchema: standard.jsonSchema,
    },
  } as StandardSchemaWithJSON
}

/** One line per zod issue: the field path and zod's message (which never quotes the value). */
function describeIssues(error: z.ZodError): string {
  const lines = error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : 'input'}: ${i.message}`)
  return `Invalid arguments: ${lines.join('; ')}${error.issues.length > 5 ? '; …' : ''}`
}

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  server: McpServer,
  audit: AuditRecord,
  logger: Logger,
  def: ToolDefinition<I, O>,
): void {
  server.registerTool(
    def.name,
    {
      title: def.title,
      description: def.description,
      inputSchema: advertiseOnly(def.input),
      outputSchema: def.output,
      annotations: { title: def.title, ...def.hints },
    },
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's callback generics do not narrow through our wrapper
    (async (args: any, ctx: { mcpReq: { signal: AbortSignal } }) => {
      audit.tool = def.name
      try {
        const parsed = def.input.safeParse(args ?? {})
        if (!parsed.success) throw new GatewayError('invalid_input', describeIssues(parsed.error))
        const output = await def.run(parsed.data as z.output<I>, ctx.mcpReq.signal)
        audit.toolOutcome = 'ok'
        const text = def.render ? def.render(output) : JSON.stringify(output)
        return { content: [{ type: 'text', text }], structuredContent: output as Record<string, unknown> }
      } catch (error) {
        const mapped = toGatewayError(error)
        audit.toolOutcome = 'error'
        audit.errorCode = mapped.code
        if (mapped.code === 'internal' || mapped.code === 'upstream_unavailable') {
          // Log the class and code of the cause only: its message may hold upstream ids.
          const cause = mapped.cause as { name?: string; code?: string; status?: number } | undefined
          logger.error(
            {
              event: 'tool_error',
              tool: def.name,
              code: mapped.code,
              causeName: cause?.name,
              causeCode: cause?.code,
              causeStatus: cause?.status,
            },
            'tool failed',
          )
        }
        return errorResult(mapped)
      }
      // biome-ignore lint/suspicious/noExplicitAny: see above
    }) as any,
  )
}
