import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { StackLayout } from '../../stack/layout.ts'
import { PREFERENCES_FILES } from '../../stack/managed-files.ts'
import type { StackConfig } from '../../stack/stack-config.ts'
import { type Check, check } from './check.ts'

const FIX =
  'set moderator.model ("provider/model") in sallyport.json, or model / small_model in the preferences file, then restart'

/**
 * `moderator model`: which model classifies escalated input — `moderator.model` of sallyport.json,
 * else the assistant's `small_model`, else its `model` (from the preferences file in force). With
 * none, every input the local screen escalates is blocked: a warning, not a failure (the stack
 * still serves ordinary input).
 */
export async function moderatorModelChecks(
  layout: StackLayout,
  config: StackConfig | undefined,
): Promise<Check[]> {
  if (!config) return []
  if (config.moderator.model !== undefined)
    return [check('moderator model', 'ok', `${config.moderator.model} (moderator.model)`)]
  for (const name of PREFERENCES_FILES) {
    let text: string
    try {
      text = await readFile(join(layout.userConfigDir, name), 'utf8')
    } catch {
      continue
    }
    let prefs: { small_model?: unknown; model?: unknown }
    try {
      prefs = JSON.parse(text) as typeof prefs
    } catch {
      return [
        check(
          'moderator model',
          'warn',
          `config/assistant/${name} is not plain JSON, so doctor cannot tell which model the moderator uses`,
          FIX,
        ),
      ]
    }
    if (typeof prefs.small_model === 'string')
      return [check('moderator model', 'ok', `${prefs.small_model} (the assistant's small_model)`)]
    if (typeof prefs.model === 'string')
      return [check('moderator model', 'ok', `${prefs.model} (the assistant's model)`)]
    break
  }
  return [
    check(
      'moderator model',
      'warn',
      'no model for the moderator: every input the local screen escalates is blocked until one is set',
      FIX,
    ),
  ]
}
