import { canonicalise } from './canonicalise.ts'
import { checkPath } from './check-path.ts'
import { decodeText } from './decode-text.ts'
import { denied } from './errors.ts'
import { mimeTypeOf } from './mime-type.ts'
import { readSafeFile } from './safe-file.ts'
import type { ReadResult } from './types.ts'

/**
 * `read`: pure rules, then canonicalisation with the rules applied again to the canonical path,
 * then the safe open (descriptor verified inside the root), bounded read and text checks.
 */
export async function readFile(root: string, path: string, maxBytes: number): Promise<ReadResult> {
  const checked = checkPath(path)
  if (!checked.ok) throw denied()
  const canonical = await canonicalise(root, checked.path.split('/'))
  const text = decodeText(await readSafeFile(root, canonical, maxBytes))
  return { path: checked.path, text, mimeType: mimeTypeOf(checked.path), truncated: false }
}
