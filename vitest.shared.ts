import { defineConfig } from 'vitest/config'

/**
 * Shared vitest settings. The `@sallyport/source` export condition makes workspace packages
 * resolve to their TypeScript sources in tests, so unit tests never need a prior build.
 */
export const sharedTestConfig = defineConfig({
  resolve: { conditions: ['@sallyport/source', 'import', 'node', 'default'] },
  ssr: { resolve: { conditions: ['@sallyport/source', 'import', 'node', 'default'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
    passWithNoTests: true,
    reporters: ['default', 'json'],
    outputFile: { json: './.vitest-report.json' },
  },
})
