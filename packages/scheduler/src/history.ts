import { constants } from 'node:fs'
import { lstat, mkdir, open, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import { writeFileAtomic } from './fs-util.ts'
import type { SchedulerPaths } from './paths.ts'
import { checkTaskId } from './task-source.ts'

/** How a run ended. `skipped`: the previous run of the task was still going at its slot. */
export const RUN_OUTCOMES = ['completed', 'failed', 'timeout', 'cancelled', 'skipped'] as const
export type RunOutcome = (typeof RUN_OUTCOMES)[number]

export const RunRecordSchema = z
  .object({
    /** ISO time the run started (or the slot, for a skipped run). */
    at: z.string(),
    trigger: z.enum(['schedule', 'manual']),
    outcome: z.enum(RUN_OUTCOMES),
    durationMs: z.number().int().min(0),
    /** The result file, relative to the knowledge directory (completed runs). */
    output: z.string().optional(),
    /** Why it did not complete: the runtime's error name and a sanitized message. */
    error: z.string().optional(),
  })
  .strict()
export type RunRecord = z.infer<typeof RunRecordSchema>

/** A history file is cut to its newer half once it grows beyond this. */
export const MAX_HISTORY_BYTES = 256 * 1024

const historyFile = (paths: Pick<SchedulerPaths, 'historyDir'>, id: string): string =>
  join(paths.historyDir, `${checkTaskId(id)}.jsonl`)

/** Appends one run to `knowledge/task-history/<id>.jsonl` (bounded: the older half goes first). */
export async function appendHistory(
  paths: Pick<SchedulerPaths, 'historyDir'>,
  id: string,
  record: RunRecord,
): Promise<void> {
  const path = historyFile(paths, id)
  await mkdir(paths.historyDir, { recursive: true, mode: 0o700 })
  if (!(await lstat(paths.historyDir)).isDirectory())
    throw Object.assign(new Error('knowledge/task-history is not a directory'), { code: 'ENOTDIR' })
  if ((await lstat(path).catch(() => undefined))?.isFile() === false)
    throw Object.assign(new Error('not a regular file'), { code: 'EINVAL' })
  const line = `${JSON.stringify(RunRecordSchema.parse(record))}\n`
  const size = await stat(path).then(
    (info) => info.size,
    () => 0,
  )
  if (size + line.length > MAX_HISTORY_BYTES) {
    const lines = (await readFile(path, 'utf8')).split('\n').filter(Boolean)
    const kept = lines.slice(Math.floor(lines.length / 2))
    await writeFileAtomic(path, `${kept.join('\n')}\n${line}`, 0o600)
    return
  }
  // A torn last line (a crash mid-append) must not swallow this record.
  const torn = size > 0 && !(await endsWithNewline(path, size))
  // Never through a symlink: the file and its directory must be what they say.
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
    0o600,
  )
  try {
    await handle.writeFile(torn ? `\n${line}` : line, 'utf8')
  } finally {
    await handle.close()
  }
}

/** The newest `limit` runs of a task, newest first. Lines that do not parse are skipped. */
export async function readHistory(
  paths: Pick<SchedulerPaths, 'historyDir'>,
  id: string,
  limit = 20,
): Promise<RunRecord[]> {
  let text: string
  try {
    text = await readFile(historyFile(paths, id), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  const out: RunRecord[] = []
  const lines = text.split('\n')
  for (let i = lines.length - 1; i >= 0 && out.length < limit; i--) {
    const line = lines[i]
    if (!line) continue
    try {
      const parsed = RunRecordSchema.safeParse(JSON.parse(line))
      if (parsed.success) out.push(parsed.data)
    } catch {
      // a torn line: skipped
    }
  }
  return out
}

async function endsWithNewline(path: string, size: number): Promise<boolean> {
  const handle = await open(path, 'r')
  try {
    const byte = Buffer.alloc(1)
    await handle.read(byte, 0, 1, size - 1)
    return byte[0] === 10
  } finally {
    await handle.close()
  }
}
