import { defineConfig } from 'tsup'
import { packageBuild } from '../../tsup.base.ts'

// The two builds run at once, so neither cleans `dist` (a build that cleans empties it when it
// starts, and may do so after the other one has written): the `build` script empties it first.
export default defineConfig([
  packageBuild({ clean: false }),
  // The binary: same code, one file with the shebang.
  packageBuild({ entry: ['src/bin.ts'], dts: false, clean: false, banner: { js: '#!/usr/bin/env node' } }),
])
