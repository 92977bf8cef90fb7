import { extname } from 'node:path'

// Text types only: `read` refuses anything that is not UTF-8 text, so a binary type is never
// needed. Unknown extensions are text/plain.
const BY_EXTENSION: Readonly<Record<string, string>> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.cjs': 'text/javascript',
  '.jsx': 'text/javascript',
  '.ts': 'text/typescript',
  '.mts': 'text/typescript',
  '.cts': 'text/typescript',
  '.tsx': 'text/typescript',
  '.json': 'application/json',
  '.jsonc': 'application/json',
  '.map': 'application/json',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.toml': 'application/toml',
  '.py': 'text/x-python',
  '.go': 'text/x-go',
  '.rs': 'text/x-rust',
  '.java': 'text/x-java',
  '.c': 'text/x-c',
  '.h': 'text/x-c',
  '.cc': 'text/x-c++',
  '.cpp': 'text/x-c++',
  '.hpp': 'text/x-c++',
  '.sh': 'application/x-sh',
  '.sql': 'application/sql',
}

/** A media type for a text file, from its name; `text/plain` when the extension is unknown. */
export function mimeTypeOf(path: string): string {
  return BY_EXTENSION[extname(path).toLowerCase()] ?? 'text/plain'
}
