/**
 * Where task results may go: a relative path under the knowledge directory, outside the
 * directories the stack reserves (secrets, task sources, backups, history, the user environment).
 * `{id}`, `{date}` (YYYY-MM-DD), `{time}` (HHmmss) and `{run}` (date and time) are filled in per run.
 */
export const RESERVED_KNOWLEDGE_DIRS = ['secrets', 'tasks', 'disabled-tasks', 'task-history', 'env'] as const

/** The output of a task that names none: one file per run. */
export const DEFAULT_OUTPUT = 'task-results/{id}/{run}.md'

const PLACEHOLDERS = new Set(['id', 'date', 'time', 'run'])

/** Why `path` cannot be an output destination, or undefined when it can. */
export function checkOutputPath(path: string): string | undefined {
  if (path.length === 0) return 'must not be empty'
  if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path))
    return 'must be relative to the knowledge directory'
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f\\]/.test(path)) return 'must not contain control characters or backslashes'
  for (const match of path.matchAll(/\{([^}]*)\}/g))
    if (!PLACEHOLDERS.has(match[1] ?? ''))
      return `unknown placeholder {${match[1]}} (use {id}, {date}, {time}, {run})`
  if (/[{}]/.test(path.replace(/\{(id|date|time|run)\}/g, ''))) return 'unbalanced braces'
  const segments = path.split('/')
  if (segments.some((s) => s === '' || s === '.' || s === '..'))
    return 'must not contain empty, "." or ".." segments'
  if (segments.some((s) => s.startsWith('.'))) return 'must not name hidden files or directories'
  const first = segments[0]?.toLowerCase() ?? ''
  if ((RESERVED_KNOWLEDGE_DIRS as readonly string[]).includes(first))
    return `must not be inside knowledge/${first}/`
  if (/\.(ya?ml|env|json)$/i.test(path)) return 'must not end in .yml, .yaml, .env or .json'
  return undefined
}

/** The output path of one run: placeholders filled from the id and the run's start (UTC). */
export function expandOutputPath(template: string, id: string, startedAt: Date): string {
  const iso = startedAt.toISOString()
  const date = iso.slice(0, 10)
  const time = iso.slice(11, 19).replaceAll(':', '')
  return template
    .replaceAll('{id}', id)
    .replaceAll('{date}', date)
    .replaceAll('{time}', time)
    .replaceAll('{run}', `${date}T${time}Z`)
}
