// The runtime's `apply_patch` tool takes one text in the "*** Begin Patch" format; every file it
// touches is named on a header line. The guard checks each named file and rewrites the header to
// the canonical target it approved, so the tool writes exactly what was checked. Lines are read as
// the runtime reads them (split on "\n", trimmed with String.prototype.trim, which also removes
// "\r", "\v", U+00A0, U+2028 …): a header the runtime would see is always one the guard sees,
// with the same path.

const HEADER = /^\*\*\* (Add File|Update File|Delete File|Move to):(.*)$/su

interface Header {
  readonly kind: string
  readonly path: string
}

function header(line: string): Header | undefined {
  const match = HEADER.exec(line.trim())
  return match ? { kind: match[1] ?? '', path: (match[2] ?? '').trim() } : undefined
}

/** Every file a patch names (added, updated, deleted, or moved to), in order, without duplicates. */
export function patchTargets(text: string): string[] {
  const targets = new Set<string>()
  for (const line of text.split('\n')) {
    const found = header(line)
    if (found) targets.add(found.path)
  }
  return [...targets]
}

/**
 * The patch with every header line rewritten to `*** <kind>: <approved target>` (all must be
 * approved). The runtime trims header lines, so nothing of the original line needs to survive.
 */
export function rewritePatchTargets(text: string, approved: ReadonlyMap<string, string>): string {
  return text
    .split('\n')
    .map((line) => {
      const found = header(line)
      if (!found) return line
      const target = approved.get(found.path)
      // Unreachable when called with the map of patchTargets(text); refuse rather than pass it on.
      if (target === undefined) throw new Error('patch target was not checked')
      return `*** ${found.kind}: ${target}`
    })
    .join('\n')
}
