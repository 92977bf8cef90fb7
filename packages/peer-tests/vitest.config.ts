import { defineConfig, mergeConfig } from 'vitest/config'
import { sharedTestConfig } from '../../vitest.shared.ts'

// One real runtime at a time: each integration file starts its own (≈ 400 MB), and the peers
// they drive are timing-sensitive processes of their own.
export default mergeConfig(sharedTestConfig, defineConfig({ test: { fileParallelism: false } }))
