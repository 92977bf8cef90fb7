import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// `up` and `serve` log through createCliLogger, gathered and written asynchronously: the lines
// must all still reach standard output, in order, however the process ends without a signal.

let dir: string
let module: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sallyport-cli-logger-'))
  const resolve = (name: string): string => pathToFileURL(createRequire(import.meta.url).resolve(name)).href
  // The logger and the console format it imports, compiled side by side; packages by their files.
  for (const name of ['logger', 'console-format']) {
    const source = await readFile(new URL(`./${name}.ts`, import.meta.url), 'utf8')
    const compiled = ts
      .transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      })
      .outputText.replace(/from 'pino'/, `from '${resolve('pino')}'`)
      .replace(/from 'pino-pretty'/, `from '${resolve('pino-pretty')}'`)
      .replace(/from '\.\/console-format\.ts'/, "from './console-format.mjs'")
    await writeFile(join(dir, `${name}.mjs`), compiled)
  }
  module = join(dir, 'logger.mjs')
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('createCliLogger (standard output, gathered)', () => {
  it.each([
    ['returns (the event loop empties)', ''],
    ['calls process.exit', 'process.exit(0)'],
    ['throws an uncaught exception', "setTimeout(() => { throw new Error('crash') }, 5)"],
    ['has an unhandled rejection', "Promise.reject(new Error('crash'))"],
  ])('loses no line when the process %s', (_, ending) => {
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { createCliLogger } = await import(${JSON.stringify(pathToFileURL(module).href)})
         const logger = createCliLogger()
         for (let i = 0; i < 200; i++) logger.info({ event: 'audit', n: i, password: 'p4ss' }, 'line')
         ${ending}`,
      ],
      { encoding: 'utf8', timeout: 10_000 },
    )
    const lines = child.stdout.split('\n').filter((l) => l !== '')
    expect(lines.map((l) => JSON.parse(l).n)).toEqual(Array.from({ length: 200 }, (_, i) => i))
    expect(child.stdout).not.toContain('p4ss')
  })

  it('gathers lines: a burst of lines reaches standard output in far fewer writes', () => {
    // strace is not everywhere; count the writes with a wrapped fs.writeSync/write instead.
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import fs from 'node:fs'
         let writes = 0
         for (const name of ['write', 'writeSync']) {
           const original = fs[name]
           fs[name] = function (fd, ...rest) { if (fd === 1) writes++; return original.call(this, fd, ...rest) }
         }
         const { createCliLogger } = await import(${JSON.stringify(pathToFileURL(module).href)})
         const logger = createCliLogger()
         for (let i = 0; i < 500; i++) logger.info({ event: 'audit', n: i }, 'line')
         setTimeout(() => { process.stderr.write(String(writes)) }, 600)`,
      ],
      { encoding: 'utf8', timeout: 10_000 },
    )
    expect(child.stdout.split('\n').filter((l) => l !== '')).toHaveLength(500)
    expect(Number(child.stderr)).toBeGreaterThan(0)
    expect(Number(child.stderr)).toBeLessThan(100)
  })
})
