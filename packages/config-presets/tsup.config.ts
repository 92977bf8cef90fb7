import { defineConfig } from 'tsup'
import { packageBuild } from '../../tsup.base.ts'

// Two entries: the presets, and their error class at `./errors` (no imports: every CLI command
// maps errors to exit codes with it, without loading the presets or the runtime client).
export default defineConfig(packageBuild({ entry: ['src/index.ts', 'src/errors.ts'] }))
