import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { CliError } from '../errors.ts'

/** Platform packages of `opencode-ai`, most specific first. */
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
 * Absolute path of the pinned `opencode` binary. The `opencode-ai` postinstall (which links the
 * binary and runs it with the real HOME) is deliberately not run, so the platform package is
 * resolved from `opencode-ai`'s own directory. `AGENTGATE_OPENCODE_BIN` overrides the lookup.
 * Throws `ERR_CLI_BINARY_NOT_FOUND`.
 */
export function resolveOpencodeBinary(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.AGENTGATE_OPENCODE_BIN
  if (override) {
    if (!existsSync(override))
      throw new CliError('ERR_CLI_BINARY_NOT_FOUND', 'AGENTGATE_OPENCODE_BIN does not exist')
    return override
  }
  const require = createRequire(import.meta.url)
  let fromDir: string
  try {
    fromDir = dirname(require.resolve('opencode-ai/package.json'))
  } catch {
    throw new CliError(
      'ERR_CLI_BINARY_NOT_FOUND',
      'the opencode-ai package is not installed next to agentgate',
    )
  }
  const fromAi = createRequire(join(fromDir, 'package.json'))
  for (const name of candidatePackages()) {
    try {
      const bin = join(dirname(fromAi.resolve(`${name}/package.json`)), 'bin', 'opencode')
      if (existsSync(bin)) return bin
    } catch {
      // not installed: try the next one
    }
  }
  throw new CliError(
    'ERR_CLI_BINARY_NOT_FOUND',
    `no opencode binary for ${process.platform}-${process.arch}: reinstall agentgate so opencode-ai's platform package is present`,
  )
}
