import { defineConfig } from 'tsup'
import { packageBuild } from '../../tsup.base.ts'

// Two entries: the gateway, and its configuration at `./config` (zod only: the CLI loads it for
// every command, without the MCP SDK).
export default defineConfig(packageBuild({ entry: ['src/index.ts', 'src/config.ts'] }))
