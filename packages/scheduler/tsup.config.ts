import { defineConfig } from 'tsup'
import { packageBuild } from '../../tsup.base.ts'

// `dist/plugin.js` is imported by the runtime from a fixed path, outside any node_modules tree:
// it bundles everything it needs (the task helper, zod, yaml, croner). `dist/daemon-main.js` is
// the scheduler process `up` starts. `dist/stack.js` (`./stack`) is what the CLI's stack side
// needs (paths, stack.env, the control client, the error class): Node built-ins only, no daemon.
// The two builds run at once, so neither cleans `dist` (a build that cleans also deletes every
// declaration file when its own declarations start, the other build's too): the `build` script
// empties it first.
export default defineConfig([
  packageBuild({ entry: ['src/index.ts', 'src/stack.ts', 'src/daemon-main.ts'], clean: false }),
  packageBuild({ entry: ['src/plugin.ts'], noExternal: [/./], clean: false }),
])
