import { defineConfig } from 'tsup'
import { packageBuild } from '../../tsup.base.ts'

export default defineConfig([
  packageBuild(),
  // The binary: same code, one file with the shebang. `clean` only once, by the library build.
  packageBuild({ entry: ['src/bin.ts'], dts: false, clean: false, banner: { js: '#!/usr/bin/env node' } }),
])
