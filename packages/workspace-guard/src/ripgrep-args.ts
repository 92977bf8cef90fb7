import {
  CREDENTIAL_DIRECTORIES,
  DENIED_NAMES,
  DENIED_SUBSTRINGS,
  DENIED_SUFFIXES,
  VCS_DIRECTORIES,
} from './deny-patterns.ts'

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
