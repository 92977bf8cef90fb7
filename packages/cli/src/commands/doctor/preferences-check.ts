import { join } from 'node:path'
import type { StackLayout } from '../../stack/layout.ts'
import { PREFERENCES_FILES } from '../../stack/managed-files.ts'
import { type Check, check, kindOf } from './check.ts'

/** The preferences file compose.yaml mounts writable into the container's read-only user directory. */
const COMPOSE_PREFERENCES_FILE = 'opencode.json'

/**
 * `preferences`: which preferences file of `config/assistant/` the runtime uses; a warning when
 * others are shadowed or the one in force is not the file compose.yaml mounts writable.
 */
export async function preferencesChecks(layout: StackLayout): Promise<Check[]> {
  const present: string[] = []
  for (const name of PREFERENCES_FILES)
    if ((await kindOf(join(layout.userConfigDir, name))) === 'file') present.push(name)
  if (present.length === 0) {
    return [check('preferences', 'fail', 'no preferences file in config/assistant/', 'run `sallyport init`')]
  }
  const inForce = present[0]
  const notMounted =
    inForce === COMPOSE_PREFERENCES_FILE
      ? undefined
      : `compose.yaml mounts config/assistant/${COMPOSE_PREFERENCES_FILE} writable, not ${inForce}: in the container the runtime cannot save preferences${present.includes(COMPOSE_PREFERENCES_FILE) ? '' : ' and the start fails (the mounted file is missing)'}`
  if (present.length > 1) {
    return [
      check(
        'preferences',
        'warn',
        `the runtime uses ${inForce}; ${present.slice(1).join(', ')} ${present.length > 2 ? 'are' : 'is'} shadowed${notMounted ? `; ${notMounted}` : ''}`,
        `merge the files into one${notMounted ? ` named ${COMPOSE_PREFERENCES_FILE}` : ''} and restart the stack`,
      ),
    ]
  }
  if (notMounted) {
    return [
      check(
        'preferences',
        'warn',
        `the runtime uses config/assistant/${inForce}; ${notMounted}`,
        `rename it to ${COMPOSE_PREFERENCES_FILE} (as JSON) when you run the image, or change that mount in compose.yaml`,
      ),
    ]
  }
  return [check('preferences', 'ok', `config/assistant/${inForce}`)]
}
