import { defineConfig } from 'tsup'
import { packageBuild } from '../../tsup.base.ts'

// Two entries: the client, and the msw fake runtime at `./testing` (msw stays external: peer).
export default defineConfig(packageBuild({ entry: ['src/index.ts', 'src/testing/index.ts'] }))
