import { randomBytes } from 'node:crypto'
import { rename, unlink, writeFile } from 'node:fs/promises'
import type { StackLayout } from './layout.ts'
import type { StackConfig } from './stack-config.ts'
import { renderStackEnv, stackEnvVariables } from './stack-env.ts'

/** Regenerates `state/stack.env` (0600) from the configuration; replaced atomically. */
export async function writeStackEnv(
  layout: StackLayout,
  config: StackConfig,
  nativePort: number,
): Promise<void> {
  const text = renderStackEnv(stackEnvVariables(layout, config, { nativePort }))
  const temp = `${layout.stackEnv}.${randomBytes(6).toString('hex')}.tmp`
  try {
    await writeFile(temp, text, { mode: 0o600, flag: 'wx' })
    await rename(temp, layout.stackEnv)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
}
