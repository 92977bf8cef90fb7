import type { Stats } from 'node:fs'
import { lstat, realpath, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { componentsInsideRoot, missingOrDenied } from './canonicalise.ts'
import { checkPath, isAllowedComponents } from './check-path.ts'
import { GUARD_MESSAGES, GuardError, type GuardErrorCode } from './errors.ts'
import type { InspectResult, TargetAccess } from './types.ts'

const refuse = (code: GuardErrorCode): InspectResult => ({ ok: false, code, message: GUARD_MESSAGES[code] })
const DENIED = refuse('ERR_GUARD_DENIED')

const isRoot = (path: string): boolean => path === '' || path === '.' || path === './'

/**
 * Decides, without opening anything, whether a tool that works by path (an agent's `read`,
 * `list`, `edit`, `write`…) may touch `path`, and names the canonical target it must use. The
 * same rules as `read`: pure rules on the path as given, then on the canonical path (every
 * symlink followed), which must stay inside the root; regular files only, one hard link only,
 * at most `maxBytes` for reading. `write` accepts a target that does not exist yet when its
 * deepest existing ancestor is a directory inside the root; a dangling symlink is refused (the
 * write would create its target, wherever that is).
 *
 * Unlike `read` this is a check followed by someone else's open, so a component swapped for a
 * symlink in between is not caught here; callers hand the tool the canonical path, which leaves
 * only a directory swapped by a concurrent writer inside the workspace.
 */
export async function inspectTarget(
  root: string,
  path: string,
  access: TargetAccess,
  maxBytes: number,
): Promise<InspectResult> {
  let components: string[] = []
  if (!isRoot(path)) {
    const checked = checkPath(path)
    if (!checked.ok) return DENIED
    components = checked.path.split('/')
  } else if (access === 'write') return DENIED
  try {
    return access === 'write'
      ? await inspectWrite(root, components)
      : await inspectRead(root, components, access, maxBytes)
  } catch (error) {
    return GuardError.isInstance(error) ? refuse(error.code) : DENIED
  }
}

async function inspectRead(
  root: string,
  components: readonly string[],
  access: TargetAccess,
  maxBytes: number,
): Promise<InspectResult> {
  let canonical: string
  try {
    canonical = await realpath(join(root, ...components))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return refuse((await missingOrDenied(root, components)).code)
    return DENIED
  }
  const inside = componentsInsideRoot(root, canonical)
  if (inside === undefined) return DENIED
  const stats = await lstat(canonical)
  if (stats.isDirectory()) {
    if (inside.length > 0 && !isAllowedComponents(inside, false)) return DENIED
    return { ok: true, path: inside.join('/'), absolute: canonical, kind: 'directory' }
  }
  if (!isAllowedComponents(inside)) return DENIED
  const refusal = fileRefusal(stats)
  if (refusal) return refusal
  if (access === 'list') return refuse('ERR_GUARD_NOT_FOUND')
  if (stats.size > maxBytes) return refuse('ERR_GUARD_TOO_LARGE')
  return { ok: true, path: inside.join('/'), absolute: canonical, kind: 'file' }
}

/** Special files (FIFO, socket, device) and hard-linked files are never a tool's target. */
function fileRefusal(stats: Stats): InspectResult | undefined {
  if (!stats.isFile() || stats.nlink !== 1) return DENIED
  return undefined
}

/**
 * Walks the target component by component, following each symlink to its canonical target
 * (which must be inside the root), until the path ends or a component does not exist yet.
 */
async function inspectWrite(root: string, components: readonly string[]): Promise<InspectResult> {
  let current = root
  for (let i = 0; i < components.length; i++) {
    const last = i === components.length - 1
    const next = join(current, components[i] as string)
    let entry: Stats
    try {
      entry = await lstat(next)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return DENIED
      // The rest does not exist: it will be created below `current`, a canonical directory.
      const absolute = join(current, ...components.slice(i))
      const inside = componentsInsideRoot(root, absolute)
      if (inside === undefined || !isAllowedComponents(inside)) return DENIED
      return { ok: true, path: inside.join('/'), absolute, kind: 'missing' }
    }
    if (entry.isSymbolicLink()) {
      try {
        current = await realpath(next)
      } catch {
        return DENIED // dangling or looping: a write would create or hit something unchecked
      }
      const inside = componentsInsideRoot(root, current)
      if (inside === undefined || inside.length === 0) return DENIED
      entry = await stat(current)
    } else current = next
    if (!last && !entry.isDirectory()) return DENIED
    if (last) {
      const inside = componentsInsideRoot(root, current)
      if (inside === undefined || !isAllowedComponents(inside)) return DENIED
      if (entry.isDirectory()) return DENIED
      const refusal = fileRefusal(entry)
      if (refusal) return refusal
      return { ok: true, path: inside.join('/'), absolute: current, kind: 'file' }
    }
    const inside = componentsInsideRoot(root, current)
    if (inside === undefined || !isAllowedComponents(inside, false)) return DENIED
  }
  return DENIED
}
