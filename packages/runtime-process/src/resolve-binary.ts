import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { RuntimeProcessError } from './errors.ts'

/**
 * Platform packages of `opencode-ai` for `platform`/`arch`, most specific first (the x64 builds
 * without AVX2 are `-baseline`, the Alpine ones `-musl`).
 */
export function opencodePlatformPackages(
  platform: NodeJS.Platform | string = process.platform,
  arch: string = process.arch,
): string[] {
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

/** Where {@link findOpencodeBinary} looks. */
export interface FindBinaryOptions {
  /** Read for the override variable; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv
  /** The variable naming a binary to use instead; default `SALLYPORT_OPENCODE_BIN`. */
  readonly overrideVariable?: string
}

/** Why no binary was found. */
export type BinaryMissingReason = 'override-missing' | 'package-missing' | 'platform-missing'

/** Outcome of {@link findOpencodeBinary}. */
export type BinaryLookup =
  | { readonly ok: true; readonly path: string }
  | {
      readonly ok: false
      readonly code: 'ERR_RUNTIME_PROCESS_BINARY_NOT_FOUND'
      readonly reason: BinaryMissingReason
      readonly message: string
      /** Paths and packages looked at (for diagnostics; no secret is among them). */
      readonly tried: readonly string[]
    }

/**
 * Finds the pinned `opencode` binary. The `opencode-ai` postinstall (which links the binary and
 * runs it with the real HOME) is deliberately not run, so the platform package is resolved from
 * `opencode-ai`'s own directory, which is a dependency of this package. The override variable, when
 * set, names the binary to use instead; it must exist.
 */
export function findOpencodeBinary(options: FindBinaryOptions = {}): BinaryLookup {
  const variable = options.overrideVariable ?? 'SALLYPORT_OPENCODE_BIN'
  const override = (options.env ?? process.env)[variable]
  if (override) {
    if (existsSync(override)) return { ok: true, path: override }
    return missing('override-missing', `${variable} does not exist`, [override])
  }
  const require = createRequire(import.meta.url)
  let fromDir: string
  try {
    fromDir = dirname(require.resolve('opencode-ai/package.json'))
  } catch {
    return missing('package-missing', 'the opencode-ai package is not installed', ['opencode-ai'])
  }
  const fromAi = createRequire(join(fromDir, 'package.json'))
  const tried: string[] = []
  for (const name of opencodePlatformPackages()) {
    try {
      const bin = join(dirname(fromAi.resolve(`${name}/package.json`)), 'bin', 'opencode')
      if (existsSync(bin)) return { ok: true, path: bin }
      tried.push(bin)
    } catch {
      tried.push(`${name} (not installed)`)
    }
  }
  return missing(
    'platform-missing',
    `no opencode binary for ${process.platform}-${process.arch}; tried ${tried.join(', ')}`,
    tried,
  )
}

/**
 * {@link findOpencodeBinary}, throwing `RuntimeProcessError` `ERR_RUNTIME_PROCESS_BINARY_NOT_FOUND`
 * when there is no binary.
 *
 * @example
 * const binary = resolveOpencodeBinary({ env: process.env })
 */
export function resolveOpencodeBinary(options: FindBinaryOptions = {}): string {
  const found = findOpencodeBinary(options)
  if (found.ok) return found.path
  throw new RuntimeProcessError(found.code, found.message)
}

function missing(reason: BinaryMissingReason, message: string, tried: string[]): BinaryLookup {
  return { ok: false, code: 'ERR_RUNTIME_PROCESS_BINARY_NOT_FOUND', reason, message, tried }
}
