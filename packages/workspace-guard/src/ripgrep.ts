// ripgrep, the fast search engine: finding a usable binary, the arguments of its two runs and the
// process itself. Everything it prints is only a candidate: the guard's own checks still decide.

import { spawn, spawnSync } from 'node:child_process'
import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'
import {
  CREDENTIAL_DIRECTORIES,
  DENIED_NAMES,
  DENIED_SUBSTRINGS,
  DENIED_SUFFIXES,
  VCS_DIRECTORIES,
} from './deny-patterns.ts'

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

// One glob that keeps ripgrep out of denied places. It only saves work (not descending into
// `.git` matters on real repositories): every path ripgrep prints is checked again by the
// package's own rules. It must match only paths those rules deny (never more), so that both
// engines see the same files: hence nothing for `.env.*` (which must spare `.env.example`) nor
// for the file-only names (`env` may be a directory). One case-sensitive alternation rather than
// many `--iglob`s: case-insensitive globs cost ripgrep its fast literal/extension strategies
// (measured: up to 2x on a 50 000-file tree); upper-case variants are still caught afterwards.
const DENY_GLOB = `!{${[
  ...VCS_DIRECTORIES,
  ...CREDENTIAL_DIRECTORIES,
  ...DENIED_NAMES,
  ...DENIED_SUFFIXES.map((suffix) => `*${suffix}`),
  ...DENIED_SUBSTRINGS.map((needle) => `*${needle}*`),
].join(',')}}`

/** What every ripgrep run shares: no config file, no ignore files, no symlinks, deny globs. */
function commonArgs(maxBytes: number, exclude: ReadonlySet<string>): string[] {
  return [
    '--no-config', // RIPGREP_CONFIG_PATH could add --follow or drop our globs
    '--no-messages',
    '--null',
    '--hidden', // dot-files are ordinary workspace files; the deny rules decide, not the dot
    '--no-ignore', // .gitignore & co. would make the two engines disagree
    '--no-follow',
    '--max-filesize',
    String(maxBytes),
    ...[...exclude].flatMap((name) => ['--glob', `!${name}`]),
    '--glob',
    DENY_GLOB,
  ]
}

/** `rg --files`: every candidate file, NUL-separated. */
export function listFilesArgs(maxBytes: number, exclude: ReadonlySet<string>): string[] {
  return [...commonArgs(maxBytes, exclude), '--files', '--', '.']
}

/**
 * `rg --files-with-matches` for a literal query: the query follows `-e` (so `-x` or `--help` is a
 * pattern, never a flag) and `--fixed-strings` (never a regular expression).
 */
export function filesContainingArgs(
  query: string,
  caseSensitive: boolean,
  maxBytes: number,
  exclude: ReadonlySet<string>,
): string[] {
  return [
    ...commonArgs(maxBytes, exclude),
    '--files-with-matches',
    '--fixed-strings',
    caseSensitive ? '--case-sensitive' : '--ignore-case',
    '-e',
    query,
    '--',
    '.',
  ]
}

/** Paths printed by one ripgrep run, and whether the time budget had to kill it. */
export interface RipgrepRun {
  /** Relative paths (`./` removed) in ripgrep's order; ends when ripgrep exits or is killed. */
  readonly paths: AsyncIterable<string>
  /** True when ripgrep was killed at the deadline: its output is incomplete. */
  timedOut(): boolean
  /** True when ripgrep could not be started at all. */
  failed(): boolean
}

const decoder = new TextDecoder('utf-8', { fatal: true })

function decodePath(bytes: Uint8Array): string | undefined {
  try {
    const path = decoder.decode(bytes)
    return path.startsWith('./') ? path.slice(2) : path
  } catch {
    return undefined // not UTF-8: no string names that file reliably, so it is never returned
  }
}

/**
 * Runs ripgrep in `root` (never through a shell: arguments go to execve as they are) with an
 * empty environment, reads its NUL-separated output as it comes, and kills it with SIGKILL at
 * the deadline or as soon as the consumer stops iterating.
 */
export function runRipgrep(
  binary: string,
  root: string,
  args: readonly string[],
  timeoutMs: number,
): RipgrepRun {
  let timedOut = false
  let failed = false
  async function* paths(): AsyncGenerator<string> {
    const child = spawn(binary, args, {
      cwd: root,
      env: {},
      stdio: ['ignore', 'pipe', 'ignore'],
      shell: false,
    })
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()))
    child.on('error', () => {
      failed = true
    })
    const kill = (): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
    const timer = setTimeout(() => {
      timedOut = true
      kill()
    }, timeoutMs)
    let pending: Buffer = Buffer.alloc(0)
    try {
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        let start = 0
        let end = pending.indexOf(0, start)
        while (end !== -1) {
          const path = decodePath(pending.subarray(start, end))
          if (path !== undefined && path !== '') yield path
          start = end + 1
          end = pending.indexOf(0, start)
        }
        pending = pending.subarray(start)
      }
    } finally {
      clearTimeout(timer)
      kill()
      await closed // reaped before the search returns: no stray ripgrep outlives a search
    }
  }
  return { paths: paths(), timedOut: () => timedOut, failed: () => failed }
}
