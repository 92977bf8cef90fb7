import { realpathSync } from 'node:fs'
import { createWorkspaceGuard } from '@sallyport/workspace-guard'
import type { LookupAll } from './fetch-target.ts'
import { GUARDED_AGENTS, profileToolAllowlists } from './guarded-profiles.ts'
import { filterListing } from './listing-filter.ts'
import { type EnforceContext, enforceToolCall, refuse } from './tool-rules.ts'

/** What the runtime hands a plugin function (the parts this plugin reads). */
export interface PluginInput {
  readonly directory: string
  readonly worktree?: string
}

/** The hooks this plugin registers (opencode 1.18.33 plugin hook shapes). */
export interface RuntimeGuardHooks {
  'chat.params': (input: { sessionID: string; agent: string }, output: unknown) => Promise<void>
  'tool.execute.before': (
    input: { tool: string; sessionID: string; callID: string },
    output: { args: Record<string, unknown> },
  ) => Promise<void>
  'tool.execute.after': (
    input: { tool: string; sessionID: string; callID: string; args?: Record<string, unknown> },
    output: { title?: string; output?: unknown; metadata?: unknown },
  ) => Promise<void>
  'shell.env': (
    input: { cwd: string; sessionID?: string },
    output: { env: Record<string, string> },
  ) => Promise<void>
}

/** A runtime plugin: called once per workspace instance. */
export type RuntimeGuardPlugin = (input: PluginInput) => Promise<RuntimeGuardHooks>

export interface RuntimeGuardOptions {
  /** Agents whose tool calls are guarded. Default: the gateway's profiles and `scheduled`. */
  readonly guardedAgents?: readonly string[]
  /** Largest file a guarded agent may read, in bytes. Default 10 MiB. */
  readonly maxReadBytes?: number
  /**
   * Environment variables removed from the runtime process when the plugin loads, so that no
   * tool it runs (shell, formatters, language servers) inherits them. Default: the native
   * server password. The runtime reads it once, at start, before any plugin loads.
   */
  readonly secretEnv?: readonly string[]
  /**
   * The tools each guarded agent may use at all (`all`: every tool the guard knows). Default:
   * derived from the profiles' permission rules ({@link profileToolAllowlists}). An agent not
   * listed, or a session whose agent is unknown, gets the tools every listed agent may use.
   */
  readonly profileTools?: Readonly<Record<string, ReadonlySet<string> | 'all'>>
  /** The environment to clean (default `process.env`). */
  readonly env?: Record<string, string | undefined>
  /** DNS lookup for the fetch check (default: the system resolver). */
  readonly lookup?: LookupAll
  /** Most sessions whose agent is remembered; the oldest is forgotten (and then guarded). */
  readonly maxSessions?: number
}

/** Environment variables that hold the runtime's own secrets. */
export const RUNTIME_SECRET_ENV: readonly string[] = Object.freeze(['OPENCODE_SERVER_PASSWORD'])

const DEFAULT_MAX_READ_BYTES = 10 * 1024 * 1024
/** The runtime's own default timeout of `webfetch`, in seconds. */
const WEBFETCH_DEFAULT_TIMEOUT_S = 30
const DEFAULT_MAX_SESSIONS = 10_000

/**
 * The runtime guard: a native plugin of the agent runtime that holds every tool call of the
 * gateway's agents to the workspace guard's rules. The runtime matches its own permission
 * patterns against the path as the model wrote it; this plugin resolves the target (symlinks,
 * hard links, special files, secret names case-insensitively), refuses what the gateway's own
 * `workspace.read` would refuse, and hands the tool the canonical path it approved.
 *
 * A session is guarded when any model request of it ran one of `guardedAgents`, or when no
 * model request of it was seen (fail closed): trusted native sessions with their own agents
 * keep the runtime's normal behaviour. A guarded session may use only its profile's tools (see
 * `profileTools`), whatever approvals other sessions left in the runtime.
 *
 * @throws TypeError for invalid options.
 */
export function createRuntimeGuard(options: RuntimeGuardOptions = {}): RuntimeGuardPlugin {
  const guarded = new Set(options.guardedAgents ?? GUARDED_AGENTS)
  const maxBytes = options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1)
    throw new TypeError('maxReadBytes must be a positive integer')
  if (!Number.isSafeInteger(maxSessions) || maxSessions < 1)
    throw new TypeError('maxSessions must be a positive integer')
  const allowlists = options.profileTools ?? profileToolAllowlists()
  const strictest = intersection(Object.values(allowlists))
  const secretEnv = [...(options.secretEnv ?? RUNTIME_SECRET_ENV)]
  const env = options.env ?? process.env

  return async (input) => {
    for (const name of secretEnv) delete env[name]
    const directory = input.directory
    let context: EnforceContext | undefined
    // sessionID → the guarded agent it last ran, or null for a trusted session. Once a session
    // has run a guarded agent it stays guarded: the runtime also reports its hidden helper
    // agents (title, summary) for the same session, and those must not turn the guard off.
    const sessions = new Map<string, string | null>()

    // Made on first use: the instance directory is canonicalised once, the guard created once.
    const workspace = (): EnforceContext => {
      if (context === undefined) {
        const root = realpathSync(directory)
        const guard = createWorkspaceGuard({ root, maxBytes, ripgrepPath: false })
        context = { guard, directory, root, ...(options.lookup && { lookup: options.lookup }) }
      }
      return context
    }

    return {
      async 'chat.params'(params) {
        const agent = guarded.has(params.agent) ? params.agent : (sessions.get(params.sessionID) ?? null)
        // Re-inserted so the map's order is least recently used first.
        sessions.delete(params.sessionID)
        sessions.set(params.sessionID, agent)
        if (sessions.size > maxSessions) sessions.delete(sessions.keys().next().value as string)
      },
      async 'tool.execute.before'(call, output) {
        // In every session: 1.18.33 answers GET /permission with a 400 (for every session of the
        // runtime) while a webfetch ask without a timeout is pending, so the ask could not even
        // be relayed. The runtime's own default (30 s) is written in explicitly.
        if (call.tool === 'webfetch' && output.args.timeout === undefined)
          output.args.timeout = WEBFETCH_DEFAULT_TIMEOUT_S
        const agent = sessions.get(call.sessionID)
        if (agent === null) return
        // A session never seen gets the tools every guarded profile allows, and no more.
        const allowed = agent === undefined ? strictest : (allowlists[agent] ?? strictest)
        if (allowed !== 'all' && !allowed.has(call.tool))
          throw refuse(call.tool, 'this tool is not available to this credential')
        await enforceToolCall(workspace(), call.tool, output.args)
      },
      async 'tool.execute.after'(call, output) {
        if (call.tool !== 'glob' && call.tool !== 'read') return
        if (sessions.get(call.sessionID) === null || typeof output.output !== 'string') return
        const { guard, root } = workspace()
        output.output = await filterListing(guard, root, call.tool, call.args ?? {}, output.output)
      },
      async 'shell.env'(_call, output) {
        // Belt and braces: the variables are gone from the process already; a value set here
        // would override one that reappeared.
        for (const name of secretEnv) if (env[name] !== undefined) output.env[name] = ''
      },
    }
  }
}

/** The tools every allowlist allows (`all` when every one is `all`). */
function intersection(lists: ReadonlyArray<ReadonlySet<string> | 'all'>): ReadonlySet<string> | 'all' {
  let out: Set<string> | undefined
  for (const list of lists) {
    if (list === 'all') continue
    out = out === undefined ? new Set(list) : new Set([...out].filter((tool) => list.has(tool)))
  }
  return out ?? 'all'
}
