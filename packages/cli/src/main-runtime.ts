import type { Argv } from 'yargs'
import type { Io } from './io.ts'

/** Commands that run processes: serve, up, attach, doctor. */
export function commandsWithRuntime(parser: Argv, _io: Io): Argv {
  return parser
}
