import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { relativeToStack, type StackLayout } from '../../stack/layout.ts'
import { type Check, check, kindOf } from './check.ts'

/**
 * `config dir <name>`, one per directory the runtimes load as a config directory (the assistant's
 * and the moderator's managed directories, the user config directory): pre-seeded so the runtime
 * does not npm-install its plugin SDK there, and free of package files it bootstrapped anyway.
 */
export async function configDirChecks(layout: StackLayout): Promise<Check[]> {
  const out: Check[] = []
  for (const dir of [layout.managedDir, layout.moderatorDir, layout.userConfigDir]) {
    const name = relativeToStack(layout, dir)
    let lock: { packages?: Record<string, { dependencies?: Record<string, string> }> } | undefined
    try {
      lock = JSON.parse(await readFile(join(dir, 'package-lock.json'), 'utf8'))
    } catch {
      lock = undefined
    }
    const seeded = lock?.packages?.['']?.dependencies?.['@opencode-ai/plugin'] !== undefined
    const modules =
      (await kindOf(join(dir, 'node_modules'))) === 'dir'
        ? await readdir(join(dir, 'node_modules'))
        : undefined
    const pkg = await kindOf(join(dir, 'package.json'))
    if (!seeded || modules === undefined) {
      out.push(
        check(
          `config dir ${name}`,
          'fail',
          'not pre-seeded: the runtime would npm-install its plugin SDK here',
          'run `sallyport init` to add the seed files',
        ),
      )
    } else if (modules.length > 0 || pkg) {
      out.push(
        check(
          `config dir ${name}`,
          'warn',
          'package files were bootstrapped here',
          `delete ${name}/node_modules/* and ${name}/package.json`,
        ),
      )
    } else {
      out.push(check(`config dir ${name}`, 'ok', 'pre-seeded; no plugin install at startup'))
    }
  }
  return out
}
