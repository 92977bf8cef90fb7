import { existsSync, linkSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { expect } from 'vitest'
import type { SearchMatch, WorkspaceGuard } from '../../src/index.ts'
import { createWorkspaceFixture, type WorkspaceFixture } from './workspace-fixture.ts'

/** The literal planted in allowed and denied places alike. */
export const NEEDLE = 'zebraNeedle'
const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n'

/**
 * The ripgrep binary the tests drive. Required, not optional: without it the "ripgrep engine"
 * tests would silently run the built-in engine twice. CI installs it (scripts/install-system-deps.sh).
 */
export const RIPGREP: string = (() => {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(directory, 'rg')
    if (directory !== '' && existsSync(candidate)) return candidate
  }
  throw new Error('the workspace-guard tests need ripgrep (`rg`) on PATH: run scripts/install-system-deps.sh')
})()

/** Both engines, as guard options. */
export const ENGINES = [
  ['ripgrep', { ripgrepPath: RIPGREP }],
  ['built-in', { ripgrepPath: false as const }],
] as const

/**
 * The search fixture: a few allowed files holding NEEDLE, and the same needle in denied files,
 * symlinks pointing out, a FIFO, binary, oversize, private-key and hard-linked files,
 * node_modules, plus flag-like lines, 150 similar lines and symbols in five languages.
 */
export function createSearchFixture(): WorkspaceFixture {
  const fx = createWorkspaceFixture()
  fx.write('src/app.ts', `export function ${NEEDLE}Fn() {\n  return 1\n}\n// ${NEEDLE} in a comment\n`)
  fx.write('README.md', `# Project\n\nFind the ${NEEDLE.toUpperCase()} here.\n`)
  fx.write('config/.env.example', `TOKEN=${NEEDLE}\n`)
  fx.write('src/env/index.ts', `export const envNeedle = '${NEEDLE}'\n`)
  // Denied places, each holding the needle in its name or content.
  fx.write('.env', `TOKEN=${NEEDLE}\n`)
  fx.write('.env.local', `TOKEN=${NEEDLE}\n`)
  fx.write('.git/config', `${NEEDLE}\n`)
  fx.write('.GIT/HEAD', `${NEEDLE}\n`)
  fx.write('secrets/zebraNeedle.txt', `${NEEDLE}\n`)
  fx.write('.ssh/zebraNeedle_ed25519', `${NEEDLE}\n`)
  fx.write('keys/server.pem', `${NEEDLE}\n`)
  fx.write('src/client_secret.ts', `export function ${NEEDLE}Secret() {}\n`)
  fx.write('\uff0eenv', `${NEEDLE}\n`) // fullwidth-dot ".env"
  // Files search must skip: binary, too large, private key content, hard-linked.
  fx.write('assets/zebraNeedle.bin', Buffer.concat([Buffer.from(NEEDLE), Buffer.from([0, 1, 2])]))
  fx.write('logs/big-zebraNeedle.log', `${NEEDLE}\n${'x'.repeat(300 * 1024)}\n`)
  fx.write('notes/zebraNeedle-key.txt', `${NEEDLE}\n${PEM}`)
  fx.write('links/zebraNeedle-twin.txt', `${NEEDLE}\n`)
  linkSync(join(fx.root, 'links/zebraNeedle-twin.txt'), join(fx.root, 'links/twin-b.txt'))
  // Symlinks: never followed, never listed.
  fx.writeOutside('zebraNeedle-outside.txt', `${NEEDLE} ${fx.canary}\n`)
  fx.link(fx.outside, 'outside-dir')
  fx.link(join(fx.outside, 'zebraNeedle-outside.txt'), 'zebraNeedle-link.txt')
  fx.link('.env', 'zebraNeedle-notes.txt')
  fx.fifo('zebraNeedle.fifo')
  // Excluded by default.
  fx.write('node_modules/pkg/zebraNeedle.js', `module.exports = '${NEEDLE}'\n`)
  // Flags, regex characters, and many matches.
  fx.write(
    'docs/cli.md',
    'Run with --help to list flags.\nUse -e to pass a pattern.\nMatch a.*b literally.\n',
  )
  fx.write('docs/many.txt', Array.from({ length: 150 }, (_, i) => `repeat line ${i}`).join('\n'))
  // Symbols in several languages.
  fx.write('lib/models.py', 'class ZebraModel:\n    def zebra_needle(self):\n        pass\n')
  fx.write('lib/server.go', 'package lib\nfunc ZebraNeedle() {}\ntype ZebraServer struct{}\n')
  fx.write('lib/lib.rs', 'pub struct ZebraNeedle;\nimpl ZebraNeedle {\n    fn zebra(&self) {}\n}\n')
  fx.write('lib/Zebra.java', 'public class Zebra {\n    public void zebraNeedle() {}\n}\n')
  return fx
}

const DENIED_FRAGMENTS = [
  '.env',
  '.git',
  '.GIT',
  'secret',
  '.ssh',
  '.pem',
  'outside',
  '-link',
  '-notes',
  'fifo',
  '\uff0e',
]

/** No match names a denied, symlinked or outside file, or shows outside content. */
export function expectNothingDenied(fx: WorkspaceFixture, matches: readonly SearchMatch[]): void {
  for (const match of matches) {
    for (const fragment of DENIED_FRAGMENTS) {
      if (match.path === 'config/.env.example' && fragment === '.env') continue
      expect(match.path).not.toContain(fragment)
    }
    expect(match.preview ?? '').not.toContain(fx.canary)
    expect(match.path).not.toMatch(/^\/|(^|\/)\.\.(\/|$)/)
  }
}

/** Every result is something `read` returns. */
export async function expectReadable(guard: WorkspaceGuard, matches: readonly SearchMatch[]): Promise<void> {
  for (const match of matches)
    await expect(guard.read(match.path)).resolves.toMatchObject({ path: match.path })
}
