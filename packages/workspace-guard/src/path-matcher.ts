/**
 * How well a relative path matches a `files` query: a rank (lower is better) or undefined.
 * A query with `*` or `?` is a glob, case-insensitive: `*` and `?` stay inside one component,
 * `**` spans components; a glob without `/` is matched against the file name, one with `/`
 * against the whole relative path. Any other query is a case-insensitive substring: an exact
 * file name ranks first, then a name prefix, then a name substring, then a path substring.
 */
export type PathMatcher = (relative: string) => number | undefined

/** One glob element, as the old regular-expression translation defined it. */
type GlobToken =
  | { readonly kind: 'char'; readonly char: string } // one literal character (case-folded)
  | { readonly kind: 'one' } // `?`: one character other than `/`
  | { readonly kind: 'star' } // `*`: any run of characters other than `/`
  | { readonly kind: 'any' } // `**` not before `/`: any run of characters at all
  | { readonly kind: 'dirs' } // `**/`: nothing, or any run of characters ending in `/`

/**
 * Simple case folding of one code point, close to what a `/iu` regular expression compares:
 * `ſ` and `s`, the Kelvin sign and `k` fold together.
 */
function fold(char: string): string {
  if (char.length === 1 && char.charCodeAt(0) < 0x80) return char.toLowerCase()
  const upper = char.toUpperCase()
  return ([...upper].length === 1 ? upper : char).toLowerCase()
}

function tokenize(glob: string): GlobToken[] {
  const tokens: GlobToken[] = []
  const chars = [...glob]
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i] as string
    let token: GlobToken
    if (char === '*' && chars[i + 1] === '*') {
      if (chars[i + 2] === '/') {
        token = { kind: 'dirs' }
        i += 2
      } else {
        token = { kind: 'any' }
        i += 1
      }
    } else if (char === '*') token = { kind: 'star' }
    else if (char === '?') token = { kind: 'one' }
    else token = { kind: 'char', char: fold(char) }
    // Collapse runs: after `**`, a further `*`, `**` or `**/` adds nothing (any·X = any).
    if (
      tokens.at(-1)?.kind === 'any' &&
      (token.kind === 'star' || token.kind === 'any' || token.kind === 'dirs')
    )
      continue
    tokens.push(token)
  }
  return tokens
}

/**
 * Compiles a glob into a case-insensitive whole-string test. `*` and `?` stay inside one
 * component, `**` before a `/` matches zero or more whole components, a lone `**` anything at all; other
 * characters are literal. The test simulates all positions in the glob at once (no
 * backtracking), so it costs at most O(text length × glob length) whatever the glob.
 */
export function compileGlob(glob: string): (text: string) => boolean {
  const tokens = tokenize(glob)
  // States: token i starts at state start[i]; a `dirs` token owns one more state (inside the
  // run, before its closing `/`). The last state accepts.
  const start: number[] = []
  let count = 0
  for (const token of tokens) {
    start.push(count)
    count += token.kind === 'dirs' ? 2 : 1
  }
  const accept = count
  const stateToken: number[] = []
  tokens.forEach((token, index) => {
    stateToken.push(index)
    if (token.kind === 'dirs') stateToken.push(index)
  })

  // Adds a state and everything reachable from it without consuming a character.
  const enter = (set: Uint8Array, state: number): void => {
    while (state < accept && set[state] === 0) {
      set[state] = 1
      const token = tokens[stateToken[state] as number] as GlobToken
      const inner = token.kind === 'dirs' && state !== start[stateToken[state] as number]
      if (token.kind === 'star' || token.kind === 'any') state += 1
      else if (token.kind === 'dirs' && !inner) {
        // Either skip the whole optional `**/`, or step inside it.
        enter(set, state + 2)
        state += 1
      } else return
    }
    if (state === accept) set[accept] = 1
  }

  return (text) => {
    let current = new Uint8Array(count + 1)
    let next = new Uint8Array(count + 1)
    enter(current, 0)
    for (const raw of text) {
      const char = fold(raw)
      next.fill(0)
      let alive = false
      for (let state = 0; state < accept; state++) {
        if (current[state] === 0) continue
        const index = stateToken[state] as number
        const token = tokens[index] as GlobToken
        const after = start[index + 1] ?? accept
        switch (token.kind) {
          case 'char':
            if (char === token.char) enter(next, after)
            break
          case 'one':
            if (raw !== '/') enter(next, after)
            break
          case 'star':
            if (raw !== '/') enter(next, state)
            break
          case 'any':
            enter(next, state)
            break
          case 'dirs':
            // Only the inner state consumes: any character stays inside, a `/` may also close.
            if (state !== start[index]) {
              enter(next, state)
              if (raw === '/') enter(next, after)
            }
            break
        }
      }
      for (let state = 0; state <= accept; state++) if (next[state] === 1) alive = true
      if (!alive) return false
      const previous = current
      current = next
      next = previous
    }
    return current[accept] === 1
  }
}

function baseName(relative: string): string {
  return relative.slice(relative.lastIndexOf('/') + 1)
}

/** A matcher for one `files` query. */
export function createPathMatcher(query: string): PathMatcher {
  if (/[*?]/.test(query)) {
    const matches = compileGlob(query)
    const onName = !query.includes('/')
    return (relative) => (matches(onName ? baseName(relative) : relative) ? 0 : undefined)
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
