import { readdir, stat } from 'node:fs/promises'
import { isAbsolute, relative } from 'node:path'
import type { WorkspaceGuard } from '@sallyport/workspace-guard'

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
  const instructions = output.indexOf(INSTRUCTIONS_BLOCK)
  // The instruction files the read tool appended were checked before the read, but a file
  // swapped in between would have been loaded anyway (measured: 13 of 80 reads under a swap
  // loop). Their content never reaches a guarded agent through a read; it can read them itself.
  if (instructions >= 0) return output.slice(0, instructions + '</content>'.length)
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
  if (removed === 0 && !/^\(Showing \d+ of \d+ entries/mu.test(kept)) return kept
  // The runtime closes the listing with "(N entries)", or "(Showing X of N entries. … beyond entry
  // K)" for a page: no count may tell what was left out, on this page or any other.
  const hidden = [...names].filter((name) => !guard.check(base === '' ? name : `${base}/${name}`).ok).length
  const plural = (n: number): string => `${n} ${n === 1 ? 'entry' : 'entries'}`
  return kept
    .replace(
      /^\((\d+) entr(?:y|ies)\)$/mu,
      (_match, total: string) => `(${plural(Math.max(0, Number(total) - removed))})`,
    )
    .replace(/^\(Showing (\d+) of (\d+) entries\..*\)$/mu, (_match, shown: string, total: string) => {
      const visible = Math.max(0, Number(shown) - removed)
      return `(Showing ${visible} of ${Math.max(0, Number(total) - hidden)} entries. Use 'offset' to read more.)`
    })
}

/** Where the read tool appends the instruction files it loaded along with the file. */
const INSTRUCTIONS_BLOCK = '</content>\n<system-reminder>\n'

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
