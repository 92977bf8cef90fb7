import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { PeerTestsError } from './errors.ts'

/**
 * The absolute path of the script a package declares as `bin[name]` (resolved from `from`, by
 * default this package). Peer tools are run with an explicit Node binary, never through
 * `node_modules/.bin` shims.
 *
 * Throws `PeerTestsError` `ERR_PEER_SPAWN` when the package or the bin entry does not exist.
 */
export function resolveBin(pkg: string, name: string, from: string = import.meta.url): string {
  try {
    const manifest = createRequire(from).resolve(`${pkg}/package.json`)
    const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: string | Record<string, string> }
    const entry = typeof bin === 'string' ? bin : bin?.[name]
    if (!entry) throw new Error(`no bin ${name}`)
    return join(dirname(manifest), entry)
  } catch (cause) {
    throw new PeerTestsError('ERR_PEER_SPAWN', `${pkg} has no bin ${name}: is it installed?`, { cause })
  }
}

/**
 * The whole environment a peer tool runs with: `PATH`, a throw-away `HOME` (the Inspector
 * writes its catalog and OAuth state there), no colours. Nothing else of the test process leaks
 * in, so a CI variable or a developer's `~/.npmrc` cannot change what the tool does.
 */
export function peerEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    LANG: 'C.UTF-8',
    ...extra,
  }
}
