import { lstatSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import type { TargetAccess, WorkspaceGuard } from '@sallyport/workspace-guard'
import { checkFetchTarget, type LookupAll } from './fetch-target.ts'
import { patchTargets, rewritePatchTargets } from './patch-paths.ts'

/**
 * What the guard does with each tool of the pinned runtime (opencode 1.18.33) when a guarded
 * agent calls it. Every tool not named here is refused: a tool installed later (an MCP server,
 * another plugin's tool) cannot be checked, so it cannot run on a remote credential's behalf.
 */
export const TOOL_RULES = Object.freeze({
  /** Path tools: the path argument is checked and replaced by its canonical target. */
  read: { kind: 'path', arg: 'filePath', access: 'read' },
  lsp: { kind: 'path', arg: 'filePath', access: 'read' },
  list: { kind: 'path', arg: 'path', access: 'list', optional: true },
  glob: { kind: 'path', arg: 'path', access: 'list', optional: true },
  edit: { kind: 'path', arg: 'filePath', access: 'write' },
  write: { kind: 'path', arg: 'filePath', access: 'write' },
  multiedit: { kind: 'path', arg: 'filePath', access: 'write' },
  apply_patch: { kind: 'patch', arg: 'patchText' },
  patch: { kind: 'patch', arg: 'patchText' },
  webfetch: { kind: 'fetch', arg: 'url' },
  // Governed by the profile's permission rules alone (bash asks in `remote-full`, is denied
  // elsewhere); none of them opens a workspace path the model chose.
  bash: { kind: 'pass' },
  question: { kind: 'pass' },
  todowrite: { kind: 'pass' },
  todoread: { kind: 'pass' },
  skill: { kind: 'pass' },
  plan_exit: { kind: 'pass' },
  invalid: { kind: 'pass' },
  // Refused outright. `task` starts a subagent whose own profile would apply (the review ran a
  // shell in one without any ask); `grep` prints matching lines of any file it searches, secret
  // files included, and its permission pattern is the search pattern, not the file; the web
  // search tools send workspace content to third parties.
  task: { kind: 'deny', reason: 'subagents are not available to remote credentials' },
  grep: { kind: 'deny', reason: 'content search is not available here; read files one by one' },
  websearch: { kind: 'deny', reason: 'web search is not available to remote credentials' },
  codesearch: { kind: 'deny', reason: 'code search is not available to remote credentials' },
} as const satisfies Record<string, ToolRule>)

export type ToolRule =
  | { kind: 'path'; arg: string; access: TargetAccess; optional?: boolean }
  | { kind: 'patch'; arg: string }
  | { kind: 'fetch'; arg: string }
  | { kind: 'pass' }
  | { kind: 'deny'; reason: string }

const marker = Symbol.for('sallyport.runtime-guard.ToolRefusedError')

/** Thrown into the runtime: it becomes the tool call's error, which the model reads. */
export class ToolRefusedError extends Error {
  override readonly name = 'ToolRefusedError'
  // Read by isInstance through `in`, which works across copies of this package (Symbol.for).
  readonly [marker] = true

  /** True for a `ToolRefusedError`, also one created by another copy of this package. */
  static isInstance(value: unknown): value is ToolRefusedError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}

export interface EnforceContext {
  readonly guard: WorkspaceGuard
  /** The instance directory as the runtime knows it (may differ from the guard's canonical root). */
  readonly directory: string
  /** The guard's canonical root. */
  readonly root: string
  readonly lookup?: LookupAll
}

/** The refusal a tool call gets: `<tool>: refused by the workspace guard: <why>` (never a path). */
export const refuse = (tool: string, why: string): ToolRefusedError =>
  new ToolRefusedError(`${tool}: refused by the workspace guard: ${why}`)

/**
 * Checks one tool call of a guarded agent and rewrites its path arguments in place to the
 * canonical targets the checks approved (so the tool opens exactly what was checked). Throws
 * {@link ToolRefusedError} with a message that names no path.
 */
export async function enforceToolCall(
  ctx: EnforceContext,
  tool: string,
  args: Record<string, unknown>,
): Promise<void> {
  const rule: ToolRule | undefined = Object.hasOwn(TOOL_RULES, tool)
    ? TOOL_RULES[tool as keyof typeof TOOL_RULES]
    : undefined
  if (rule === undefined) throw refuse(tool, 'this tool is not available to remote credentials')
  switch (rule.kind) {
    case 'pass':
      return
    case 'deny':
      throw refuse(tool, rule.reason)
    case 'path': {
      const value = args[rule.arg]
      if (tool === 'glob') assertGlobPattern(tool, args.pattern)
      // An omitted optional path means the instance directory; it is set explicitly, so the
      // tool cannot fall back to anything the checks did not see.
      const target = value === undefined && rule.optional ? '.' : value
      if (typeof target !== 'string' || target === '') throw refuse(tool, 'a path is required')
      const approved = await approve(ctx, tool, target, rule.access)
      if (rule.access === 'read') await assertInstructionFiles(ctx, tool, approved)
      args[rule.arg] = approved
      return
    }
    case 'patch': {
      const text = args[rule.arg]
      if (typeof text !== 'string') throw refuse(tool, 'a patch is required')
      const approved = new Map<string, string>()
      for (const target of patchTargets(text)) {
        approved.set(target, await approve(ctx, tool, target, 'write'))
      }
      args[rule.arg] = rewritePatchTargets(text, approved)
      return
    }
    case 'fetch': {
      const verdict = await checkFetchTarget(args[rule.arg], ctx.lookup)
      if (!verdict.ok) throw refuse(tool, verdict.reason)
      return
    }
  }
}

/** The canonical absolute target of `value` (absolute, or relative to the instance directory). */
async function approve(
  ctx: EnforceContext,
  tool: string,
  value: string,
  access: TargetAccess,
): Promise<string> {
  const inside = insideRoot(ctx, value)
  if (inside === undefined) throw refuse(tool, 'the path is outside the workspace')
  const verdict = await ctx.guard.inspect(inside === '' ? '.' : inside, access)
  if (!verdict.ok) throw refuse(tool, verdict.message)
  return verdict.absolute
}

/**
 * Files the runtime's `read` tool loads by itself, unasked, from every directory between the file
 * it reads and the workspace root, and appends to the tool's output ("Instructions from: …";
 * measured on 1.18.33: AGENTS.md, CLAUDE.md unless disabled, CONTEXT.md). That second open never
 * passes through a hook, so a planted `AGENTS.md → state/credentials/owner/key` (or `/dev/zero`,
 * or a FIFO) would ride along with any ordinary read.
 */
export const INSTRUCTION_FILES: readonly string[] = Object.freeze(['AGENTS.md', 'CLAUDE.md', 'CONTEXT.md'])

/**
 * Refuses a read when any instruction file the runtime would load along with `absolute` exists
 * but is not readable by the guard's rules (a link out, a hard link, a special or secret file,
 * one over the size limit). Checked from the file's directory up to, not including, the root,
 * as the runtime walks.
 */
async function assertInstructionFiles(ctx: EnforceContext, tool: string, absolute: string): Promise<void> {
  const candidates: string[] = []
  for (let dir = dirname(absolute); dir !== ctx.root && dir.startsWith(`${ctx.root}/`); dir = dirname(dir))
    for (const name of INSTRUCTION_FILES) candidates.push(join(dir, name))
  for (const candidate of candidates) {
    // Synchronous on purpose: a dozen lookups of usually absent names cost microseconds this way,
    // against ~40 µs each through the thread pool (measured with bench/run.mjs).
    if (lstatSync(candidate, { throwIfNoEntry: false }) === undefined) continue // nothing loaded from there
    const verdict = await ctx.guard.inspect(relative(ctx.root, candidate), 'read')
    if (!verdict.ok || verdict.kind !== 'file')
      throw refuse(tool, 'an instruction file the runtime would load with it is not readable')
  }
}

/** The path relative to the workspace root, or undefined when it lies outside (lexically). */
export function insideRoot(
  ctx: Pick<EnforceContext, 'directory' | 'root'>,
  value: string,
): string | undefined {
  if (value.includes('\0')) return undefined
  const absolute = resolve(ctx.directory, value)
  for (const base of new Set([ctx.directory, ctx.root])) {
    const rel = relative(base, absolute)
    if (rel === '') return ''
    if (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel)) return rel
  }
  return undefined
}

/** A glob pattern may not climb out of its directory or name an absolute path. */
function assertGlobPattern(tool: string, pattern: unknown): void {
  if (typeof pattern !== 'string' || pattern === '') throw refuse(tool, 'a pattern is required')
  if (pattern.startsWith('/') || pattern.startsWith('~') || pattern.split(/[\\/]/u).includes('..'))
    throw refuse(tool, 'the pattern must stay inside the workspace')
}
