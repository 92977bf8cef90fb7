/**
 * How well a relative path matches a `files` query: a rank (lower is better) or undefined.
 * A query with `*` or `?` is a glob, case-insensitive: `*` and `?` stay inside one component,
 * `**` spans components; a glob without `/` is matched against the file name, one with `/`
 * against the whole relative path. Any other query is a case-insensitive substring: an exact
 * file name ranks first, then a name prefix, then a name substring, then a path substring.
 */
export type PathMatcher = (relative: string) => number | undefined

function escapeRegExp(value: string): string {
  return value.replace(/[.+^${}()|[\]\\]/g, '\\$&')
}

/** Translates a glob into an anchored regular expression. Other characters are literal. */
export function globToRegExp(glob: string): RegExp {
  let source = ''
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i] as string
    if (char === '*' && glob[i + 1] === '*') {
      // `**/` matches zero or more whole components; a lone `**` anything at all.
      if (glob[i + 2] === '/') {
        source += '(?:.*/)?'
        i += 2
      } else {
        source += '.*'
        i += 1
      }
    } else if (char === '*') source += '[^/]*'
    else if (char === '?') source += '[^/]'
    else source += escapeRegExp(char)
  }
  return new RegExp(`^${source}$`, 'iu')
}

function baseName(relative: string): string {
  return relative.slice(relative.lastIndexOf('/') + 1)
}

/** A matcher for one `files` query. */
export function createPathMatcher(query: string): PathMatcher {
  if (/[*?]/.test(query)) {
    const pattern = globToRegExp(query)
    const onName = !query.includes('/')
    return (relative) => (pattern.test(onName ? baseName(relative) : relative) ? 0 : undefined)
  }
  const needle = query.toLowerCase()
  return (relative) => {
    const path = relative.toLowerCase()
    const name = baseName(path)
    if (name === needle) return 0
    if (name.startsWith(needle)) return 1
    if (name.includes(needle)) return 2
    return path.includes(needle) ? 3 : undefined
  }
}
