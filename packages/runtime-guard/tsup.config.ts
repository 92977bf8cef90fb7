import { defineConfig } from 'tsup'
import { packageBuild } from '../../tsup.base.ts'

// Both entries bundle the workspace guard and the policy: the runtime imports `dist/plugin.js`
// from a fixed path, outside any node_modules tree, so it must need nothing else.
export default defineConfig(
  packageBuild({ entry: ['src/index.ts', 'src/plugin.ts'], noExternal: [/^@sallyport\//] }),
)
