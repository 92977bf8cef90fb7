/**
 * Components of `absolute` relative to `root` when `absolute` is `root` or lies below it, else
 * undefined. Both must be canonical (no symlinks, no `.`/`..`); the comparison is textual on
 * whole components, so `/work-other` is not inside `/work`.
 */
export function componentsInsideRoot(root: string, absolute: string): string[] | undefined {
  if (absolute === root) return []
  const prefix = root.endsWith('/') ? root : `${root}/`
  if (!absolute.startsWith(prefix)) return undefined
  const components = absolute.slice(prefix.length).split('/')
  // A canonical path never has these; refuse rather than trust a surprising kernel answer.
  if (components.some((c) => c === '' || c === '.' || c === '..')) return undefined
  return components
}
