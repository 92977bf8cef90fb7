import { readdir, stat } from 'node:fs/promises'
import { isAbsolute, relative } from 'node:path'
import type { WorkspaceGuard } from '@agentgate/workspace-guard'

/**
 * Names are metadata too: the gateway's own search never returns a path its read would refuse,
 * so the agent's listings do not either. Removes from a tool's output every line that names a
 * refused entry: for `glob`, the absolute paths it prints; for `read` of a directory, the entry
 * names it prints (`name` or `name/`), matched against the directory's real entries so that no
 * other line is ever touched.
 */
export async function filterListing(
  guard: WorkspaceGuard,
  root: string,
  tool: string,
  args: Record<string, unknown>,
  output: string,
): Promise<string> {
  if (tool === 'glob') return filterLines(output, (line) => refusedPath(guard, root, line))
  if (tool !== 'read' || typeof args.filePath !== 'string') return output
  const dir = args.filePath
  let names: Set<string>
  try {
    if (!(await stat(dir)).isDirectory()) return output
    names = new Set(await readdir(dir))
  } catch {
    return output
  }
  const base = relative(root, dir)
  let removed = 0
  const kept = filterLines(output, (line) => {
    const name = line.trim().replace(/\/$/u, '')
    if (!names.has(name) || guard.check(base === '' ? name : `${base}/${name}`).ok) return false
    removed++
    return true
  })
  // The runtime closes the listing with "(N entries)": the count must not tell what was left out.
  return removed === 0
    ? kept
    : kept.replace(/^\((\d+) entr(?:y|ies)\)$/mu, (_match, total: string) => {
        const n = Math.max(0, Number(total) - removed)
        return `(${n} ${n === 1 ? 'entry' : 'entries'})`
      })
}

function refusedPath(guard: WorkspaceGuard, root: string, line: string): boolean {
  const path = line.trim()
  if (!isAbsolute(path)) return false
  const rel = relative(root, path)
  if (rel === '' || rel.startsWith('../') || rel === '..' || isAbsolute(rel)) return true
  return !guard.check(rel).ok
}

function filterLines(text: string, refused: (line: string) => boolean): string {
  return text
    .split('\n')
    .filter((line) => !refused(line))
    .join('\n')
}
