import { stat } from 'node:fs/promises'
import { CliError } from '../errors.ts'
import { type StackLayout, stackLayout } from './layout.ts'

/** The layout of an initialised stack; `ERR_CLI_STACK_MISSING` when `dir` has no `state/`. */
export async function requireStack(
  dir: string,
  overrides?: Parameters<typeof stackLayout>[1],
): Promise<StackLayout> {
  const layout = stackLayout(dir, overrides)
  try {
    if ((await stat(layout.stateDir)).isDirectory()) return layout
  } catch {
    // reported below
  }
  throw new CliError(
    'ERR_CLI_STACK_MISSING',
    `no stack at ${layout.root}: run \`sallyport init --dir ${dir}\` first`,
  )
}
