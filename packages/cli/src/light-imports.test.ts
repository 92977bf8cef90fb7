import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

// Only `up` and `serve` run a gateway: every other command must start without loading the
// gateway's root (the MCP SDK, jose), which `start-gateway.ts` and `start-stack.ts` import on
// demand. The built CLI (test/global-setup.ts builds it) runs under a resolve hook that records
// every module it loads.
const scratch = mkdtempSync(join(tmpdir(), 'sallyport-light-imports-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const hooks = join(scratch, 'hooks.mjs')
writeFileSync(
  hooks,
  `import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context)
  appendFileSync(process.env.LIGHT_IMPORTS_RECORD, result.url + '\\n')
  return result
}
`,
)
const register = join(scratch, 'register.mjs')
writeFileSync(
  register,
  `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`,
)

/** The URLs of every module the built CLI loads for `args`. */
function modulesLoadedBy(args: string[]): string[] {
  const record = join(scratch, `record-${args.join('-')}.txt`)
  writeFileSync(record, '')
  const bin = join(import.meta.dirname, '..', 'dist', 'bin.js')
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, bin, ...args], {
    env: { ...process.env, LIGHT_IMPORTS_RECORD: record },
    encoding: 'utf8',
  })
  expect(run.status, run.stderr).toBe(0)
  return readFileSync(record, 'utf8').split('\n').filter(Boolean)
}

describe('the CLI entry loads no gateway for the commands that run none', () => {
  it.each(['--help', 'credential --help'])(
    'sallyport %s: no MCP SDK, no jose, no gateway root',
    (command) => {
      const loaded = modulesLoadedBy(command.split(' '))
      // The hook sees the workspace packages: the light config subpath is among them.
      expect(loaded).toContainEqual(expect.stringMatching(/\/gateway-server\/dist\/config\.js$/))
      expect(
        loaded.filter((url) => /\/node_modules\/(@modelcontextprotocol\/server|jose)\//.test(url)),
      ).toEqual([])
      expect(loaded.filter((url) => /\/gateway-server\/dist\/index\.js$/.test(url))).toEqual([])
    },
  )
})

// The scheduler's root loads its daemon, the task sources (yaml) and the schedule engine
// (croner); the presets' root loads the presets and the readiness check. Only `task`, `preset`
// and `doctor` use them, loaded when such a command runs: the rest of the CLI (the exit codes,
// `init`, `up`, `serve`) takes the light `@sallyport/scheduler/stack` and
// `@sallyport/config-presets/errors`.
describe('the CLI entry loads neither the scheduler nor the presets for the commands that use neither', () => {
  it.each(['--help', 'credential --help'])(
    'sallyport %s: no scheduler root, no presets root, no yaml, no croner',
    (command) => {
      const loaded = modulesLoadedBy(command.split(' '))
      expect(loaded).toContainEqual(expect.stringMatching(/\/scheduler\/dist\/stack\.js$/))
      expect(loaded).toContainEqual(expect.stringMatching(/\/config-presets\/dist\/errors\.js$/))
      expect(loaded.filter((url) => /\/(scheduler|config-presets)\/dist\/index\.js$/.test(url))).toEqual([])
      expect(loaded.filter((url) => /\/node_modules\/(yaml|croner)\//.test(url))).toEqual([])
    },
  )
})
