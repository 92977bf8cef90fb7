import { configDefaults, defineConfig, mergeConfig } from 'vitest/config'
import { sharedTestConfig } from '../../vitest.shared.ts'

// The end-to-end fairness test measures the owner's latency under a storm against the same
// workflow measured quietly, as a ratio. Other test files running beside it (each e2e file with a
// runtime of its own, on a 2-core machine) load the machine during one half of the measure and
// not the other, which is noise, not the storm's doing: it runs alone, after everything else.
const ALONE = ['test/e2e/fairness.test.ts']

// Projects that extend the root config add to its `include` rather than replace it, so each
// project takes the shared settings itself.
const { resolve, ssr, test: shared = {} } = sharedTestConfig
const { testTimeout, hookTimeout, pool, passWithNoTests } = shared
const project = (test: Record<string, unknown>) => ({
  resolve,
  ssr,
  test: { testTimeout, hookTimeout, pool, passWithNoTests, ...test },
})

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    test: {
      projects: [
        project({
          name: 'gateway-server',
          include: shared.include,
          exclude: [...configDefaults.exclude, ...ALONE],
        }),
        project({ name: 'gateway-server (alone)', include: ALONE, sequence: { groupOrder: 1 } }),
      ],
    },
  }),
)
