import type { McpServer } from '@modelcontextprotocol/server'
import type { z } from 'zod'
import { errorResult, toGatewayError } from '../error-mapping.js'
import type { AuditRecord, Logger } from '../logger.js'

/** MCP tool annotations: hints for clients; the gateway itself enforces policy. */
export interface ToolHints {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint: boolean
}

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
      inputSchema: def.input,
      outputSchema: def.output,
      annotations: { title: def.title, ...def.hints },
    },
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's callback generics do not narrow through our wrapper
    (async (args: any, ctx: { mcpReq: { signal: AbortSignal } }) => {
      audit.tool = def.name
      try {
        const output = await def.run(args as z.output<I>, ctx.mcpReq.signal)
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
