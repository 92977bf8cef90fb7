// The runtime's `apply_patch` tool takes one text in the "*** Begin Patch" format; every file it
// touches is named on a header line. The guard checks each named file and rewrites the header to
// the canonical target it approved, so the tool writes exactly what was checked.

const HEADER = /^(\*\*\* (?:Add File|Update File|Delete File|Move to):[ \t]*)(.*?)[ \t]*$/u

/** Every file a patch names (added, updated, deleted, or moved to), in order, without duplicates. */
export function patchTargets(text: string): string[] {
  const targets = new Set<string>()
  for (const line of text.split(/\r?\n/u)) {
    const match = HEADER.exec(line)
    if (match) targets.add(match[2] ?? '')
  }
  return [...targets]
}

/** The patch with every header's path replaced by its approved target (all must be approved). */
export function rewritePatchTargets(text: string, approved: ReadonlyMap<string, string>): string {
  return text
    .split('\n')
    .map((line) => {
      const carriage = line.endsWith('\r') ? '\r' : ''
      const match = HEADER.exec(carriage ? line.slice(0, -1) : line)
      if (!match) return line
      const target = approved.get(match[2] ?? '')
      // Unreachable when called with the map of patchTargets(text); refuse rather than pass it on.
      if (target === undefined) throw new Error('patch target was not checked')
      return `${match[1]}${target}${carriage}`
    })
    .join('\n')
}
