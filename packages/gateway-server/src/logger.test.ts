import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bufferedDestination, createLogger, flushLogger, LOG_FLUSH_MS } from './logger.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sallyport-logger-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const linesOf = async (file: string): Promise<string[]> =>
  (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '')

describe('the buffered log destination', () => {
  it('gathers lines and writes them all when flushed', async () => {
    const file = join(dir, 'flush.log')
    const logger = createLogger({
      destination: bufferedDestination(file) as unknown as NodeJS.WritableStream,
    })
    for (let i = 0; i < 5; i++) logger.info({ event: 'audit', n: i }, 'line')
    expect(await linesOf(file)).toEqual([])
    await flushLogger(logger)
    expect((await linesOf(file)).map((l) => JSON.parse(l).n)).toEqual([0, 1, 2, 3, 4])
  })

  it('writes a gathered line within the flush interval without being asked', async () => {
    const file = join(dir, 'periodic.log')
    const logger = createLogger({
      destination: bufferedDestination(file) as unknown as NodeJS.WritableStream,
    })
    logger.info({ event: 'audit' }, 'quiet')
    await new Promise((resolve) => setTimeout(resolve, LOG_FLUSH_MS * 3))
    expect(await linesOf(file)).toHaveLength(1)
  })

  it('resolves a flush of a logger whose destination cannot flush', async () => {
    const logger = createLogger({ level: 'silent', destination: process.stderr })
    await expect(flushLogger(logger)).resolves.toBeUndefined()
  })

  // The default destination in a process of its own: this very module, compiled, run to the end
  // of the process in each way a process ends today without a signal handler of its own.
  it.each([
    ['returns (the event loop empties)', ''],
    ['calls process.exit', 'process.exit(0)'],
    ['throws an uncaught exception', "setTimeout(() => { throw new Error('crash') }, 5)"],
    ['has an unhandled rejection', "Promise.reject(new Error('crash'))"],
  ])('loses no gathered line when the process %s', async (_, ending) => {
    const source = await readFile(new URL('./logger.ts', import.meta.url), 'utf8')
    const pino = pathToFileURL(createRequire(import.meta.url).resolve('pino')).href
    const compiled = ts
      .transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      })
      .outputText.replace(/from 'pino'/, `from '${pino}'`)
    const module = join(dir, `logger-${Math.random().toString(36).slice(2)}.mjs`)
    await writeFile(module, compiled)
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { createLogger } = await import(${JSON.stringify(pathToFileURL(module).href)})
         const logger = createLogger()
         for (let i = 0; i < 20; i++) logger.info({ event: 'audit', n: i }, 'line')
         ${ending}`,
      ],
      { encoding: 'utf8', timeout: 10_000 },
    )
    const lines = child.stdout.split('\n').filter((l) => l !== '')
    expect(lines.map((l) => JSON.parse(l).n)).toEqual(Array.from({ length: 20 }, (_, i) => i))
  })
})
