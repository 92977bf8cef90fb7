import type { Options } from 'tsup'

/** The one tsup configuration every package builds with: ESM, declarations, Node 20. */
export function packageBuild(overrides: Options = {}): Options {
  return {
    entry: ['src/index.ts'],
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: false,
    treeshake: true,
    ...overrides,
  }
}
