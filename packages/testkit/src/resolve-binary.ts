import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/** Platform packages of `opencode-ai`, most specific first, for the current platform. */
function candidatePackages(): string[] {
  const { platform, arch } = process
  if (platform === 'linux' && arch === 'x64')
    return [
      'opencode-linux-x64',
      'opencode-linux-x64-baseline',
      'opencode-linux-x64-musl',
      'opencode-linux-x64-baseline-musl',
    ]
  if (platform === 'linux' && arch === 'arm64') return ['opencode-linux-arm64', 'opencode-linux-arm64-musl']
  return [`opencode-${platform}-${arch}`, `opencode-${platform}-${arch}-baseline`]
}

/**
 * Absolute path of the real `opencode` binary of the pinned `opencode-ai` package.
 *
 * The package's postinstall (which would link the binary and run it with the real HOME) is not
 * run in this workspace, so the platform package is resolved from `opencode-ai`'s own directory.
 * `OPENCODE_BIN` overrides the lookup. Throws an `Error` listing what was tried when none exists.
 */
export function resolveOpencodeBinary(): string {
  const override = process.env.OPENCODE_BIN
  if (override) return override
  const require = createRequire(import.meta.url)
  const tried: string[] = []
  let fromDir: string
  try {
    fromDir = dirname(require.resolve('opencode-ai/package.json'))
  } catch (cause) {
    throw new Error('testkit: cannot resolve the opencode-ai package; is it installed?', { cause })
  }
  const fromAi = createRequire(join(fromDir, 'package.json'))
  for (const name of candidatePackages()) {
    try {
      const bin = join(dirname(fromAi.resolve(`${name}/package.json`)), 'bin', 'opencode')
      if (existsSync(bin)) return bin
      tried.push(bin)
    } catch {
      tried.push(`${name} (not installed)`)
    }
  }
  throw new Error(
    `testkit: no opencode binary for ${process.platform}-${process.arch}; tried ${tried.join(', ')}`,
  )
}
