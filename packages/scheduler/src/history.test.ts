import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useTempDirs } from '../test/helpers.ts'
import { appendHistory, MAX_HISTORY_BYTES, type RunRecord, readHistory } from './history.ts'

const tempDir = useTempDirs('sp-hist-')

const record = (n: number, extra: Partial<RunRecord> = {}): RunRecord => ({
  at: new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString(),
  trigger: 'schedule',
  outcome: 'completed',
  durationMs: n,
  ...extra,
})

describe('appendHistory / readHistory', () => {
  it('appends one JSON line per run (0600) and reads them newest first', async () => {
    const paths = { historyDir: join(tempDir(), 'knowledge', 'task-history') }
    await appendHistory(paths, 'daily', record(1, { output: 'task-results/daily/a.md' }))
    await appendHistory(paths, 'daily', record(2, { outcome: 'failed', error: 'ProviderAuthError' }))
    await appendHistory(paths, 'daily', record(3, { trigger: 'manual', outcome: 'skipped' }))
    const file = join(paths.historyDir, 'daily.jsonl')
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(3)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const runs = await readHistory(paths, 'daily')
    expect(runs.map((run) => run.durationMs)).toEqual([3, 2, 1])
    expect(runs[2]).toEqual(record(1, { output: 'task-results/daily/a.md' }))
  })

  it('keeps tasks apart and honours the limit', async () => {
    const paths = { historyDir: tempDir() }
    for (let i = 0; i < 30; i++) await appendHistory(paths, 'a', record(i))
    await appendHistory(paths, 'b', record(99))
    expect((await readHistory(paths, 'a')).map((run) => run.durationMs)).toEqual(
      Array.from({ length: 20 }, (_, i) => 29 - i),
    )
    expect((await readHistory(paths, 'a', 3)).map((run) => run.durationMs)).toEqual([29, 28, 27])
    expect((await readHistory(paths, 'b')).map((run) => run.durationMs)).toEqual([99])
  })

  it('no history is an empty list', async () => {
    expect(await readHistory({ historyDir: join(tempDir(), 'none') }, 'daily')).toEqual([])
  })

  it('skips torn and foreign lines', async () => {
    const paths = { historyDir: tempDir() }
    const file = join(paths.historyDir, 'daily.jsonl')
    writeFileSync(
      file,
      [
        JSON.stringify(record(1)),
        '{"at":"2026-01-01T00:02:00.000Z","trigger":"sched',
        'not json at all',
        JSON.stringify({ ...record(2), extra: 'unknown key' }),
        JSON.stringify({ ...record(3), outcome: 'exploded' }),
        '',
        JSON.stringify(record(4)),
        '',
      ].join('\n'),
    )
    expect((await readHistory(paths, 'daily')).map((run) => run.durationMs)).toEqual([4, 1])
  })

  it(`stays under ${MAX_HISTORY_BYTES} bytes: past it the older half is cut, the newest runs kept`, async () => {
    const paths = { historyDir: tempDir() }
    const file = join(paths.historyDir, 'big.jsonl')
    const lines: string[] = []
    let size = 0
    for (let n = 0; size < MAX_HISTORY_BYTES - 200; n++) {
      const line = JSON.stringify(record(n, { error: 'x'.repeat(100) }))
      lines.push(line)
      size += line.length + 1
    }
    writeFileSync(file, `${lines.join('\n')}\n`)
    await appendHistory(paths, 'big', record(1_000_000, { error: 'y'.repeat(300) }))
    const after = readFileSync(file, 'utf8')
    expect(after.length).toBeLessThan(MAX_HISTORY_BYTES / 2 + 1000)
    const kept = after.trim().split('\n')
    expect(kept).toHaveLength(lines.length - Math.floor(lines.length / 2) + 1)
    expect(kept.at(-2)).toBe(lines.at(-1))
    expect(kept[0]).toBe(lines[Math.floor(lines.length / 2)])
    expect((await readHistory(paths, 'big', 1))[0]?.durationMs).toBe(1_000_000)
    expect(statSync(file).mode & 0o777).toBe(0o600)

    // Many appends never let it grow past the limit.
    for (let i = 0; i < 2500; i++) await appendHistory(paths, 'big', record(i, { error: 'z'.repeat(100) }))
    expect(statSync(file).size).toBeLessThanOrEqual(MAX_HISTORY_BYTES)
    expect((await readHistory(paths, 'big', 1))[0]?.durationMs).toBe(2499)
  })

  it('refuses an invalid record or task id', async () => {
    const paths = { historyDir: tempDir() }
    await expect(appendHistory(paths, 'a', { ...record(1), durationMs: -1 })).rejects.toThrow()
    await expect(appendHistory(paths, 'a', { ...record(1), secret: 'x' } as RunRecord)).rejects.toThrow()
    await expect(readHistory(paths, '../a')).rejects.toMatchObject({ code: 'ERR_SCHEDULER_INVALID_ID' })
    await expect(appendHistory(paths, '../a', record(1))).rejects.toMatchObject({
      code: 'ERR_SCHEDULER_INVALID_ID',
    })
  })

  it('a torn last line (no trailing newline) does not swallow the next record', async () => {
    const paths = { historyDir: tempDir() }
    const file = join(paths.historyDir, 'daily.jsonl')
    const torn = '{"at":"2026-01-01T00:02:00.000Z","trigger":"sched'
    writeFileSync(file, `${JSON.stringify(record(1))}\n${torn}`)
    await appendHistory(paths, 'daily', record(3))
    await appendHistory(paths, 'daily', record(4))
    expect((await readHistory(paths, 'daily')).map((run) => run.durationMs)).toEqual([4, 3, 1])
    expect(readFileSync(file, 'utf8')).toBe(
      `${JSON.stringify(record(1))}\n${torn}\n${JSON.stringify(record(3))}\n${JSON.stringify(record(4))}\n`,
    )
  })

  it('a file that is only a torn line keeps the new record readable', async () => {
    const paths = { historyDir: tempDir() }
    const file = join(paths.historyDir, 'daily.jsonl')
    writeFileSync(file, '{"at":')
    await appendHistory(paths, 'daily', record(7))
    expect((await readHistory(paths, 'daily')).map((run) => run.durationMs)).toEqual([7])
    expect(readFileSync(file, 'utf8')).toBe(`{"at":\n${JSON.stringify(record(7))}\n`)
  })

  it('adds no blank line to an intact file or an empty one', async () => {
    const paths = { historyDir: tempDir() }
    const file = join(paths.historyDir, 'daily.jsonl')
    writeFileSync(file, '')
    await appendHistory(paths, 'daily', record(1))
    await appendHistory(paths, 'daily', record(2))
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify(record(1))}\n${JSON.stringify(record(2))}\n`)
  })

  it('refuses a symlinked history file and does not write through it', async () => {
    const root = tempDir()
    const paths = { historyDir: join(root, 'task-history') }
    mkdirSync(paths.historyDir)
    const target = join(root, 'elsewhere.txt')
    writeFileSync(target, 'precious\n')
    symlinkSync(target, join(paths.historyDir, 'daily.jsonl'))
    await expect(appendHistory(paths, 'daily', record(1))).rejects.toMatchObject({ code: 'EINVAL' })
    expect(readFileSync(target, 'utf8')).toBe('precious\n')
    expect(lstatSync(join(paths.historyDir, 'daily.jsonl')).isSymbolicLink()).toBe(true)

    // A dangling link: its target is not created either.
    const missing = join(root, 'not-created.txt')
    symlinkSync(missing, join(paths.historyDir, 'other.jsonl'))
    await expect(appendHistory(paths, 'other', record(1))).rejects.toMatchObject({ code: 'EINVAL' })
    expect(existsSync(missing)).toBe(false)

    // The other tasks' histories work as before.
    await appendHistory(paths, 'fine', record(2))
    expect((await readHistory(paths, 'fine')).map((run) => run.durationMs)).toEqual([2])
  })

  it('refuses a symlinked history directory and writes nothing into its target', async () => {
    const root = tempDir()
    const real = join(root, 'somewhere')
    mkdirSync(real)
    const paths = { historyDir: join(root, 'task-history') }
    symlinkSync(real, paths.historyDir)
    await expect(appendHistory(paths, 'daily', record(1))).rejects.toMatchObject({ code: 'ENOTDIR' })
    expect(readdirSync(real)).toEqual([])
  })

  it('refuses a history "file" that is a directory (or any non-regular file)', async () => {
    const paths = { historyDir: tempDir() }
    mkdirSync(join(paths.historyDir, 'daily.jsonl'))
    await expect(appendHistory(paths, 'daily', record(1))).rejects.toMatchObject({ code: 'EINVAL' })
  })

  it('creates the history directory', async () => {
    const root = tempDir()
    mkdirSync(join(root, 'knowledge'))
    const paths = { historyDir: join(root, 'knowledge', 'task-history') }
    await appendHistory(paths, 'a', record(1))
    expect(statSync(paths.historyDir).isDirectory()).toBe(true)
    appendFileSync(join(paths.historyDir, 'a.jsonl'), `${JSON.stringify(record(2))}\n`)
    expect((await readHistory(paths, 'a')).length).toBe(2)
  })
})
