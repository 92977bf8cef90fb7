import type { StackLayout } from '../../stack/layout.ts'
import { loadStackConfig, type StackConfig } from '../../stack/stack-config.ts'
import { type Check, check } from './check.ts'

/**
 * `config`: sallyport.json exists and is valid. Also returns the configuration, which the checks
 * of ports and processes need (they are skipped without it).
 */
export async function configChecks(
  layout: StackLayout,
): Promise<{ checks: Check[]; config: StackConfig | undefined }> {
  try {
    const config = await loadStackConfig(layout.configFile)
    return { checks: [check('config', 'ok', 'sallyport.json is valid')], config }
  } catch (error) {
    return {
      checks: [
        check('config', 'fail', (error as Error).message, 'run `sallyport init` or correct sallyport.json'),
      ],
      config: undefined,
    }
  }
}
