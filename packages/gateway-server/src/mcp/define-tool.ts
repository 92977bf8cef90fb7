import {
  type InputRequiredResult,
  isInputRequiredResult,
  type McpServer,
  type StandardSchemaWithJSON,
} from '@modelcontextprotocol/server'
import type { ToolName } from '@sallyport/policy'
import type { z } from 'zod'
import { errorResult, toGatewayError } from '../error-mapping.js'
import { GatewayError } from '../errors.js'
import { meteredCall } from '../fairness.js'
import type { RequestScope } from '../http/app.js'
import { RateLimited, type SlotKind, type SlotRelease } from '../http/limits.js'
import { type CallRounds, isRetry } from '../jobs/input-rounds.js'
import type { Logger } from '../logger.js'
import type { ScreeningRecord } from '../screening.js'
import { type CallbackContext, roundsOf } from './call-rounds.js'

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

/** A gateway tool; its name is its key in the tool record (`server-factory.ts`), typed by policy. */
export interface ToolDefinition<I extends z.ZodObject, O extends z.ZodObject> {
  title: string
  description: string
  input: I
  output: O
  hints: ToolHints
  /** The tool's answer: its output, or (a waiting job tool) the forms of a multi round-trip round. */
  run: (input: z.output<I>, signal: AbortSignal, call: ToolCall) => Promise<z.output<O> | InputRequiredResult>
  /**
   * The per-credential concurrency slot a call holds while it runs (runs, waits); `retry` when
   * the call continues a multi round-trip round (it starts nothing new). Default: `call`.
   */
  slot?: (input: z.output<I>, retry: boolean) => SlotKind | undefined
  /** The tool takes part in multi round-trip rounds (a waiting job tool); others refuse a retry. */
  rounds?: true
}

/** The release `keep` hands out when the call holds no slot (any more). */
const NO_SLOT: SlotRelease = Object.assign(() => undefined, { events: () => false })

/** What a tool's run may do with its own call besides answering it. */
export interface ToolCall {
  /** Records how the call's input was screened, for its audit line (never the text). */
  screened(record: ScreeningRecord): void
  /**
   * Takes the slot over from the call: it is no longer released when the call returns, but when
   * the returned function is called (a run that outlives its `agent.run` call); its `events`
   * charges a run slot's runtime events. Called twice, the second gets a release that does nothing.
   */
  keep(): SlotRelease
  /** The call's multi round-trip side (MCP 2026-07-28): forms it may answer with, a retry's answers. */
  rounds: CallRounds
  /**
   * Counts `operations` more against the credential's rate, for a call that cost the runtime
   * more than one operation (a listing of thousands of sessions): this call still answers; the
   * credential's next calls wait longer.
   */
  charge(operations: number): void
}

type JsonSchemaConverter = StandardSchemaWithJSON['~standard']['jsonSchema']

/** A JSON schema and everything in it, frozen: a schema converted once is shared by every request. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

/**
 * The schema's JSON-schema converter, converting once per direction and target. The gateway's
 * schemas are module constants, so their JSON schemas are the same for every request; the SDK
 * converts on each new server (that is, on each request) otherwise.
 */
function convertOnce(standard: StandardSchemaWithJSON['~standard']): JsonSchemaConverter {
  const converted = new Map<string, Record<string, unknown>>()
  const once =
    (io: 'input' | 'output') =>
    (options: Parameters<JsonSchemaConverter['input']>[0]): Record<string, unknown> => {
      const key = `${io} ${options?.target ?? ''}`
      let json = converted.get(key)
      if (json === undefined) {
        json = deepFreeze(standard.jsonSchema[io](options))
        converted.set(key, json)
      }
      return json
    }
  return { input: once('input'), output: once('output') }
}

const advertisedInputs = new WeakMap<z.ZodObject, StandardSchemaWithJSON>()
const advertisedOutputs = new WeakMap<z.ZodObject, StandardSchemaWithJSON>()

/**
 * The tool's input schema as clients see it, with a validation step that lets every value
 * through: the SDK would otherwise answer invalid input with its own untyped text before our
 * wrapper runs. The wrapper validates with the real schema and answers `invalid_input`. One
 * per schema, its JSON schema converted once.
 */
function advertiseOnly(schema: z.ZodObject): StandardSchemaWithJSON {
  let advertised = advertisedInputs.get(schema)
  if (advertised === undefined) {
    const standard = (schema as unknown as StandardSchemaWithJSON)['~standard']
    advertised = {
      '~standard': {
        version: 1,
        vendor: 'sallyport',
        validate: (value: unknown) => ({ value }),
        jsonSchema: convertOnce(standard),
      },
    } as StandardSchemaWithJSON
    advertisedInputs.set(schema, advertised)
  }
  return advertised
}

/** The tool's output schema: zod's own validation, its JSON schema converted once. */
function validatedOutput(schema: z.ZodObject): StandardSchemaWithJSON {
  let output = advertisedOutputs.get(schema)
  if (output === undefined) {
    const standard = (schema as unknown as StandardSchemaWithJSON)['~standard']
    output = { '~standard': { ...standard, jsonSchema: convertOnce(standard) } } as StandardSchemaWithJSON
    advertisedOutputs.set(schema, output)
  }
  return output
}

/** The most top-level fields a tool call's arguments may have (the largest input has a dozen). */
const MAX_ARGUMENT_FIELDS = 64

/** The own enumerable fields of `args` up to one past the bound (0 for anything not an object). */
function fieldCount(args: unknown): number {
  if (typeof args !== 'object' || args === null) return 0
  let count = 0
  for (const key in args) if (Object.hasOwn(args, key) && ++count > MAX_ARGUMENT_FIELDS) break
  return count
}

/** The longest line of {@link describeIssues} (zod lists every unknown key in one message). */
const MAX_ISSUE_LINE = 200

/** One line per zod issue: the field path and zod's message (which never quotes the value). */
function describeIssues(error: z.ZodError): string {
  const lines = error.issues.slice(0, 5).map((i) => {
    const line = `${i.path.length > 0 ? i.path.join('.') : 'input'}: ${i.message}`
    return line.length > MAX_ISSUE_LINE ? `${line.slice(0, MAX_ISSUE_LINE)}…` : line
  })
  return `Invalid arguments: ${lines.join('; ')}${error.issues.length > 5 ? '; …' : ''}`
}

/**
 * Registers one gateway tool: structured output plus the same JSON as text (MCP: a tool with an
 * output schema SHOULD also return it serialised, for clients that read only text), errors as
 * `isError` results with a stable code, and this call's audit record settled.
 */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  server: McpServer,
  scope: RequestScope & { era: 'legacy' | 'modern' },
  logger: Logger,
  name: ToolName,
  def: ToolDefinition<I, O>,
): void {
  server.registerTool(
    name,
    {
      title: def.title,
      description: def.description,
      inputSchema: advertiseOnly(def.input),
      outputSchema: validatedOutput(def.output),
      annotations: { title: def.title, ...def.hints },
    },
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's callback generics do not narrow through our wrapper
    (async (args: any, ctx: CallbackContext) => {
      const audit = scope.audit.claim(ctx.mcpReq.id, 'tools/call')
      audit.tool = name
      // The call ends when the client cancels it or leaves (the connection closed): a wait stops
      // then, and the audit line says `aborted`, not the outcome nobody received.
      const signal = AbortSignal.any([ctx.mcpReq.signal, scope.signal])
      let release: SlotRelease | undefined
      let ran = false
      try {
        // No tool takes more than a handful of fields: a call with many is refused before zod
        // builds an issue naming every one (thousands of long keys cost the shared thread).
        if (fieldCount(args) > MAX_ARGUMENT_FIELDS)
          throw new GatewayError(
            'invalid_input',
            `Invalid arguments: more than ${MAX_ARGUMENT_FIELDS} fields`,
          )
        const parsed = def.input.safeParse(args ?? {})
        if (!parsed.success) throw new GatewayError('invalid_input', describeIssues(parsed.error))
        const input = parsed.data as z.output<I>
        const rounds = roundsOf(scope.era, ctx, { name, input, takesRounds: def.rounds === true }, audit)
        const slot = def.slot?.(input, isRetry(rounds)) ?? 'call'
        release = scope.limiter.acquire(scope.principal.username, slot)
        // What the credential's calls lately read is taken ahead, then settled by what this one
        // read (by size: see `limits.readBytesPerOperation`).
        const reserved = scope.limiter.reserveRead(scope.principal.username)
        ran = true
        const output = await meteredCall(
          (bytes) => scope.limiter.chargeRead(scope.principal.username, bytes, reserved),
          () =>
            def.run(input, signal, {
              screened: (record) => {
                audit.screening = record
              },
              keep: () => {
                const kept = release ?? NO_SLOT
                release = undefined
                return kept
              },
              rounds,
              charge: (operations) => scope.limiter.charge(scope.principal.username, operations),
            }),
        )
        audit.outcome = signal.aborted ? 'aborted' : 'ok'
        // A round's forms go back as the SDK's input_required result, untouched.
        if (isInputRequiredResult(output)) return output
        return {
          content: [{ type: 'text', text: JSON.stringify(output) }],
          structuredContent: output as Record<string, unknown>,
        }
      } catch (error) {
        if (error instanceof RateLimited) {
          audit.outcome = 'refused'
          audit.errorCode = 'rate_limited'
          return errorResult(new GatewayError('rate_limited', error.message), error.retryAfterMs)
        }
        const mapped = toGatewayError(error)
        // Invalid input is refused before the tool runs; anything later is the tool's error.
        audit.outcome = ran ? 'error' : 'refused'
        audit.errorCode = mapped.code
        // A client that left mid-call ends its call (the audit line says `aborted`): no error.
        const left = signal.aborted
        if (left) audit.outcome = 'aborted'
        if (!left && (mapped.code === 'internal' || mapped.code === 'upstream_unavailable')) {
          // Log the class and code of the cause only: its message may hold upstream ids.
          const cause = mapped.cause as { name?: string; code?: string; status?: number } | undefined
          logger.error(
            {
              event: 'tool_error',
              tool: name,
              code: mapped.code,
              causeName: cause?.name,
              causeCode: cause?.code,
              causeStatus: cause?.status,
            },
            'tool failed',
          )
        }
        return errorResult(mapped)
      } finally {
        release?.()
      }
      // biome-ignore lint/suspicious/noExplicitAny: see above
    }) as any,
  )
}
