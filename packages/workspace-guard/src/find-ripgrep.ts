import { spawnSync } from 'node:child_process'
import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'

/** Oldest ripgrep whose flags we use (`--iglob`, `--no-config`, `--null`, `--max-filesize`). */
const MIN_MAJOR = 11

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** True when `binary --version` answers like a ripgrep we can drive. */
function isUsableRipgrep(binary: string): boolean {
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 5000, env: {} })
  const match = /^ripgrep (\d+)\./m.exec(result.stdout ?? '')
  return result.status === 0 && match !== null && Number(match[1]) >= MIN_MAJOR
}

/**
 * The ripgrep binary search uses: `false` forces the built-in engine (undefined result); an
 * explicit path must be an absolute, executable ripgrep or the factory throws `TypeError`;
 * otherwise the first usable `rg` on `PATH`, else undefined (built-in engine).
 */
export function findRipgrep(option: string | false | undefined, path = process.env.PATH): string | undefined {
  if (option === false) return undefined
  if (option !== undefined) {
    if (
      typeof option !== 'string' ||
      !isAbsolute(option) ||
      !isExecutableFile(option) ||
      !isUsableRipgrep(option)
    )
      throw new TypeError('ripgrepPath must be the absolute path of a ripgrep (>= 11) executable, or false')
    return option
  }
  for (const directory of (path ?? '').split(delimiter)) {
    if (!isAbsolute(directory)) continue // a relative PATH entry would depend on the cwd
    const candidate = join(directory, 'rg')
    if (isExecutableFile(candidate) && isUsableRipgrep(candidate)) return candidate
  }
  return undefined
}
