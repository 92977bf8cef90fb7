import { GuardError } from './errors.ts'
import type { SearchMode } from './types.ts'

/** Default and largest `limit`. */
export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100
/** Longest `query`, in characters. */
export const MAX_QUERY_LENGTH = 500

/** Search options after validation. */
export interface SearchRequest {
  readonly mode: SearchMode
  readonly query: string
  readonly limit: number
  readonly caseSensitive: boolean
}

const MODES: ReadonlySet<string> = new Set(['files', 'text', 'symbols'])

function invalid(message: string): GuardError {
  // Messages name the option, never echo the value.
  return new GuardError('ERR_GUARD_INVALID', message)
}

/** Validates `search` options; throws `ERR_GUARD_INVALID`. */
export function validateSearchOptions(input: unknown): SearchRequest {
  if (typeof input !== 'object' || input === null) throw invalid('search options must be an object')
  const { mode, query, limit, caseSensitive } = input as Record<string, unknown>
  if (typeof mode !== 'string' || !MODES.has(mode)) throw invalid('mode must be files, text or symbols')
  if (typeof query !== 'string' || query.length === 0 || query.length > MAX_QUERY_LENGTH)
    throw invalid(`query must be 1 to ${MAX_QUERY_LENGTH} characters`)
  // Control characters (newlines, NUL) cannot be a literal line match and cannot be an argument.
  if (/\p{Cc}/u.test(query)) throw invalid('query must not contain control characters')
  if (/[\ud800-\udfff]/u.test(query)) throw invalid('query must be well-formed Unicode')
  if (
    limit !== undefined &&
    (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
  )
    throw invalid(`limit must be an integer from 1 to ${MAX_LIMIT}`)
  if (caseSensitive !== undefined && typeof caseSensitive !== 'boolean')
    throw invalid('caseSensitive must be a boolean')
  return {
    mode: mode as SearchMode,
    query,
    limit: limit ?? DEFAULT_LIMIT,
    caseSensitive: caseSensitive ?? false,
  }
}
