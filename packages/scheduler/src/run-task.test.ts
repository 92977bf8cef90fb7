import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import type { Message, PermissionRequest, QuestionRequest } from '@sallyport/upstream-client'
import { describe, expect, it } from 'vitest'
import { FakeRunRuntime } from '../test/fake-run-runtime.ts'
import { fileTree, pollUntil, useTempDirs } from '../test/helpers.ts'
import { type RunTaskInput, runTask, SCHEDULED_AGENT, TASK_METADATA_KEY, writeResult } from './run-task.ts'
import { HOSTILE_CONTENT_GUIDANCE, type TaskDefinition } from './task-source.ts'

const tempDir = useTempDirs('sp-run-')

const STARTED = Date.parse('2026-03-29T01:02:03.456Z')

const task = (extra: Partial<TaskDefinition> = {}): TaskDefinition => ({
  version: 1,
  id: 'daily',
  prompt: 'Summarise the notes.',
  schedule: undefined,
  timeoutSeconds: 60,
  ...extra,
})

function setup(extra: Partial<TaskDefinition> = {}, input: Partial<RunTaskInput> = {}) {
  const root = tempDir()
  const knowledgeDir = join(root, 'knowledge')
  mkdirSync(knowledgeDir)
  const runtime = new FakeRunRuntime()
  const run = (): ReturnType<typeof runTask> =>
    runTask({ runtime, task: task(extra), knowledgeDir, trigger: 'schedule', now: () => STARTED, ...input })
  return { root, knowledgeDir, runtime, run }
}

describe('runTask', () => {
  it('completed: writes the final text under the knowledge directory and records the output', async () => {
    const { knowledgeDir, runtime, run } = setup()
    runtime.onWaitUntil = () => runtime.answer('# Report\nAll good.')
    const record = await run()
    expect(record).toEqual({
      at: '2026-03-29T01:02:03.456Z',
      trigger: 'schedule',
      outcome: 'completed',
      durationMs: 0,
      output: 'task-results/daily/2026-03-29T010203Z.md',
    })
    const file = join(knowledgeDir, 'task-results', 'daily', '2026-03-29T010203Z.md')
    expect(readFileSync(file, 'utf8')).toBe('# Report\nAll good.\n')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(knowledgeDir, 'task-results')).mode & 0o777).toBe(0o700)
    expect(runtime.settled).toEqual([])
  })

  it('opens a scheduled-profile session tagged with the task and sends the prompt with the guidance once', async () => {
    const { runtime, run } = setup({
      prompt: `${HOSTILE_CONTENT_GUIDANCE}Do it.`,
      model: 'openrouter/meta/llama-3',
    })
    runtime.onPrompt = () => runtime.answer('ok')
    await run()
    expect(runtime.sessionInput).toMatchObject({
      title: 'Scheduled task daily',
      agent: SCHEDULED_AGENT,
      metadata: { [TASK_METADATA_KEY]: 'daily' },
    })
    expect(runtime.prompt?.sessionId).toBe(runtime.sessionId)
    expect(runtime.prompt?.input).toEqual({
      messageID: runtime.userMessageId,
      agent: 'scheduled',
      model: { providerID: 'openrouter', modelID: 'meta/llama-3' },
      parts: [{ type: 'text', text: `${HOSTILE_CONTENT_GUIDANCE}Do it.` }],
    })
  })

  it('adds the guidance to a prompt that lacks it, sends no model without one, and uses the given agent', async () => {
    const { runtime, run } = setup({}, { agent: 'other-profile' })
    runtime.onPrompt = () => runtime.answer('ok')
    await run()
    expect(runtime.prompt?.input).toEqual({
      messageID: runtime.userMessageId,
      agent: 'other-profile',
      parts: [{ type: 'text', text: `${HOSTILE_CONTENT_GUIDANCE}Summarise the notes.` }],
    })
    expect(runtime.sessionInput?.agent).toBe('other-profile')
  })

  it('waits for the completed last step of its own turn; joins its text parts, not synthetic ones', async () => {
    const { knowledgeDir, runtime, run } = setup({ output: 'out/{id}.md' })
    const step = (
      id: string,
      parent: string,
      info: Record<string, unknown>,
      texts: { text: string; synthetic?: boolean }[],
    ) =>
      ({
        info: {
          id,
          sessionID: runtime.sessionId,
          role: 'assistant',
          parentID: parent,
          time: { created: 1 },
          ...info,
        },
        parts: texts.map((t, i) => ({
          id: `prt_${id}${i}`,
          sessionID: runtime.sessionId,
          messageID: id,
          type: 'text',
          ...t,
        })),
      }) as Message
    runtime.onWaitUntil = () => {
      runtime.messages.push(
        step('msg_other', 'msg_someone_else', { time: { created: 1, completed: 2 }, finish: 'stop' }, [
          { text: 'not mine' },
        ]),
      )
      runtime.messages.push(
        step('msg_a1', runtime.userMessageId, { time: { created: 1, completed: 2 }, finish: 'tool-calls' }, [
          { text: 'calling' },
        ]),
      )
      runtime.notify()
      runtime.messages.push(
        step('msg_a2', runtime.userMessageId, { time: { created: 3 } }, [{ text: 'half' }]),
      )
      runtime.notify()
      setImmediate(() => {
        runtime.messages.pop()
        runtime.messages.push(
          step('msg_a2', runtime.userMessageId, { time: { created: 3, completed: 4 }, finish: 'stop' }, [
            { text: 'first' },
            { text: 'system note', synthetic: true },
            { text: 'second\n' },
          ]),
        )
        runtime.notify()
      })
    }
    const record = await run()
    expect(record.outcome).toBe('completed')
    expect(readFileSync(join(knowledgeDir, 'out', 'daily.md'), 'utf8')).toBe('first\nsecond\n')
  })

  it('a session.error fails the run with the sanitized error and writes nothing', async () => {
    const { knowledgeDir, runtime, run } = setup()
    runtime.onWaitUntil = () =>
      setImmediate(() =>
        runtime.emit({
          type: 'session.error',
          properties: {
            sessionID: runtime.sessionId,
            error: {
              name: 'ProviderAuthError',
              data: {
                message:
                  'invalid x-api-key sk-ant-api03-SECRETSECRETSECRET in /home/alice/.config/opencode/auth.json',
              },
            },
          },
        }),
      )
    const record = await run()
    expect(record.outcome).toBe('failed')
    expect(record.error).toMatch(/^ProviderAuthError: invalid x-api-key <redacted> in <(path|redacted)>/)
    expect(record.error).not.toContain('SECRET')
    expect(record.error).not.toContain('alice')
    expect(record.output).toBeUndefined()
    expect(readdirSync(knowledgeDir)).toEqual([])
  })

  it('an error on the answer fails the run with its name', async () => {
    const { runtime, run } = setup()
    runtime.onWaitUntil = () => runtime.answer('', { error: { name: 'MessageOutputLengthError' } })
    expect(await run()).toMatchObject({ outcome: 'failed', error: 'MessageOutputLengthError' })
  })

  it('a failing runtime request fails the run with the error code only', async () => {
    const { runtime, run } = setup()
    runtime.createSessionError = Object.assign(
      new Error('connect ECONNREFUSED 127.0.0.1:4096 password=hunter2'),
      {
        code: 'ERR_UPSTREAM_UNAVAILABLE',
      },
    )
    const record = await run()
    expect(record).toMatchObject({
      outcome: 'failed',
      error: 'the runtime request failed (ERR_UPSTREAM_UNAVAILABLE)',
    })
    expect(runtime.settled).toEqual([])
  })

  it('a message read that fails (a busy runtime) is retried at the next event instead of failing the run', async () => {
    const { knowledgeDir, runtime, run } = setup()
    const read = runtime.listMessages
    let reads = 0
    runtime.listMessages = async () => {
      reads++
      if (reads === 1) throw Object.assign(new Error('busy'), { code: 'ERR_UPSTREAM_TIMEOUT' })
      return read()
    }
    // The answer arrives once the first (failing) read is done.
    runtime.onWaitUntil = () => setImmediate(() => runtime.answer('Done.'))
    const record = await run()
    expect(record).toMatchObject({ outcome: 'completed', output: 'task-results/daily/2026-03-29T010203Z.md' })
    expect(reads).toBeGreaterThanOrEqual(2)
    expect(readFileSync(join(knowledgeDir, record.output ?? ''), 'utf8')).toBe('Done.\n')
    expect(runtime.settled).toEqual([])
  })

  it('message reads that keep failing end in `timeout`, not `failed`', async () => {
    const { runtime, run } = setup({ timeoutSeconds: 0.2 }, { now: Date.now })
    runtime.listMessages = async () => {
      throw new Error('busy')
    }
    runtime.onWaitUntil = () => runtime.notify()
    expect(await run()).toMatchObject({ outcome: 'timeout', error: 'no answer within 0.2s: aborted' })
    expect(runtime.settled).toEqual([runtime.sessionId])
  })

  it('a prompt that fails after the session exists settles the session', async () => {
    const { runtime, run } = setup()
    runtime.promptError = new TypeError('fetch failed')
    expect(await run()).toMatchObject({ outcome: 'failed', error: 'the runtime request failed (TypeError)' })
    expect(runtime.settled).toEqual([runtime.sessionId])
  })

  it('no answer before the timeout: `timeout`, and the session is settled', async () => {
    const { knowledgeDir, runtime, run } = setup({ timeoutSeconds: 0.2 }, { now: Date.now })
    const started = Date.now()
    const record = await run()
    expect(record.outcome).toBe('timeout')
    expect(record.error).toBe('no answer within 0.2s: aborted')
    expect(record.durationMs).toBeGreaterThanOrEqual(150)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(runtime.settled).toEqual([runtime.sessionId])
    expect(runtime.waiting).toBe(0)
    expect(readdirSync(knowledgeDir)).toEqual([])
  })

  it('an aborted signal ends the run as `cancelled` and settles the session', async () => {
    const controller = new AbortController()
    const { knowledgeDir, runtime, run } = setup({}, { signal: controller.signal })
    runtime.onWaitUntil = () => controller.abort()
    const record = await run()
    expect(record).toEqual({
      at: '2026-03-29T01:02:03.456Z',
      trigger: 'schedule',
      outcome: 'cancelled',
      durationMs: 0,
    })
    expect(runtime.settled).toEqual([runtime.sessionId])
    expect(runtime.waiting).toBe(0)
    expect(readdirSync(knowledgeDir)).toEqual([])
  })

  it('an already-aborted signal is `cancelled` at once: no session, no prompt, nothing written', async () => {
    const controller = new AbortController()
    controller.abort()
    // A short timeout and a real clock: code that started the run anyway would end `timeout`.
    const { knowledgeDir, runtime, run } = setup(
      { timeoutSeconds: 0.2 },
      { signal: controller.signal, now: Date.now },
    )
    const record = await run()
    expect(record).toMatchObject({ trigger: 'schedule', outcome: 'cancelled' })
    expect(record.error).toBeUndefined()
    expect(record.durationMs).toBeLessThan(150)
    expect(runtime.sessionInput).toBeUndefined()
    expect(runtime.prompt).toBeUndefined()
    expect(runtime.settled).toEqual([])
    expect(runtime.waiting).toBe(0)
    expect(readdirSync(knowledgeDir)).toEqual([])
  })

  it('an abort while a request is in flight is `cancelled`, not `failed`', async () => {
    const controller = new AbortController()
    const { runtime, run } = setup({}, { signal: controller.signal })
    runtime.onPrompt = () => {
      controller.abort()
      throw Object.assign(new Error('aborted'), { name: 'AbortError' })
    }
    expect((await run()).outcome).toBe('cancelled')
    expect(runtime.settled).toEqual([runtime.sessionId])
  })

  it('rejects every permission ask and question at once, then finishes', async () => {
    const { runtime, run } = setup()
    const permission = {
      id: 'per_ask00001',
      sessionID: runtime.sessionId,
      permission: 'bash',
      patterns: ['rm -rf *'],
    } as PermissionRequest
    const question = { id: 'que_ask00001', sessionID: runtime.sessionId, questions: [] } as QuestionRequest
    runtime.onWaitUntil = () => {
      runtime.permissions = [permission]
      runtime.questions = [question]
      runtime.emit({ type: 'permission.asked', properties: permission })
    }
    const pending = run()
    await pollUntil(
      () => runtime.permissionReplies.length === 1 && runtime.rejectedQuestions.length === 1,
      'the asks to be rejected',
    )
    expect(runtime.permissionReplies).toEqual([{ id: 'per_ask00001', reply: 'reject' }])
    expect(runtime.rejectedQuestions).toEqual(['que_ask00001'])
    runtime.answer('done anyway')
    expect((await pending).outcome).toBe('completed')
    expect(runtime.waiting).toBe(0)
  })

  it.each([
    ['secrets', '{id}/out.md', 'output must not be inside knowledge/secrets/'],
    ['tasks', '{id}/{run}.md', 'output must not be inside knowledge/tasks/'],
    ['x.json', 'results/{id}', 'output must not end in .yml, .yaml, .env or .json'],
    ['daily', '../{id}.md', 'output must not contain empty, "." or ".." segments'],
    ['daily', '/abs/{id}.md', 'output must be relative to the knowledge directory'],
  ])(
    'a task %j whose output %j expands to a refused path fails before any session',
    async (id, output, error) => {
      const { root, knowledgeDir, runtime, run } = setup({ id, output })
      runtime.onWaitUntil = () => runtime.answer('should never be written')
      expect(await run()).toEqual({
        at: '2026-03-29T01:02:03.456Z',
        trigger: 'schedule',
        outcome: 'failed',
        durationMs: 0,
        error,
      })
      expect(runtime.sessionInput).toBeUndefined()
      expect(runtime.prompt).toBeUndefined()
      expect(fileTree(root)).toEqual({})
      expect(readdirSync(knowledgeDir)).toEqual([])
    },
  )

  it('a result that cannot be written (a symlinked directory on the way) fails the run', async () => {
    const { root, knowledgeDir, runtime, run } = setup({ output: 'link/{id}.md' })
    const outside = join(root, 'outside')
    mkdirSync(outside)
    symlinkSync(outside, join(knowledgeDir, 'link'))
    runtime.onWaitUntil = () => runtime.answer('leak?')
    expect(await run()).toMatchObject({
      outcome: 'failed',
      error: 'the result could not be written (ENOTDIR)',
    })
    expect(readdirSync(outside)).toEqual([])
  })
})

describe('writeResult', () => {
  function knowledge() {
    const root = tempDir()
    const knowledgeDir = join(root, 'knowledge')
    const outside = join(root, 'outside')
    mkdirSync(knowledgeDir)
    mkdirSync(outside)
    return { knowledgeDir, outside }
  }

  it('creates the directories on the way and replaces an existing regular file', async () => {
    const { knowledgeDir } = knowledge()
    await writeResult(knowledgeDir, 'a/b/c/out.md', 'first')
    await writeResult(knowledgeDir, 'a/b/c/out.md', 'second\n')
    expect(readFileSync(join(knowledgeDir, 'a/b/c/out.md'), 'utf8')).toBe('second\n')
  })

  it('refuses a symlinked directory on the way', async () => {
    const { knowledgeDir, outside } = knowledge()
    mkdirSync(join(knowledgeDir, 'a'))
    symlinkSync(outside, join(knowledgeDir, 'a', 'b'))
    await expect(writeResult(knowledgeDir, 'a/b/out.md', 'x')).rejects.toMatchObject({ code: 'ENOTDIR' })
    expect(readdirSync(outside)).toEqual([])
  })

  it('refuses a symlink as the final file and leaves its target alone', async () => {
    const { knowledgeDir, outside } = knowledge()
    const target = join(outside, 'target.txt')
    writeFileSync(target, 'precious')
    mkdirSync(join(knowledgeDir, 'r'))
    symlinkSync(target, join(knowledgeDir, 'r', 'out.md'))
    await expect(writeResult(knowledgeDir, 'r/out.md', 'overwrite')).rejects.toMatchObject({ code: 'ELOOP' })
    expect(readFileSync(target, 'utf8')).toBe('precious')
  })

  it('refuses a dangling symlink as the final file without creating its target', async () => {
    const { knowledgeDir, outside } = knowledge()
    symlinkSync(join(outside, 'new.txt'), join(knowledgeDir, 'out.md'))
    await expect(writeResult(knowledgeDir, 'out.md', 'x')).rejects.toMatchObject({ code: 'ELOOP' })
    expect(readdirSync(outside)).toEqual([])
  })

  it('refuses a file where a directory should be', async () => {
    const { knowledgeDir } = knowledge()
    writeFileSync(join(knowledgeDir, 'a'), 'file')
    await expect(writeResult(knowledgeDir, 'a/out.md', 'x')).rejects.toMatchObject({ code: 'ENOTDIR' })
  })

  it('never writes outside the knowledge directory', async () => {
    const { knowledgeDir, outside } = knowledge()
    await expect(writeResult(knowledgeDir, '../outside/out.md', 'x')).rejects.toMatchObject({
      code: 'EINVAL',
    })
    expect(readdirSync(outside)).toEqual([])
  })

  it.each([
    '../escape/out.md',
    '../escape/deeper/out.md',
    'a/../../escape/out.md',
    'a/b/../../../escape/out.md',
    './out.md',
    'a/./out.md',
    'a//out.md',
    '/out.md',
    'a/',
    '',
    '..',
    'a/..',
  ])('refuses %j (a "..", "." or empty segment) before creating any directory', async (relative) => {
    const { knowledgeDir } = knowledge()
    const root = join(knowledgeDir, '..')
    const before = readdirSync(root).sort()
    await expect(writeResult(knowledgeDir, relative, 'x')).rejects.toMatchObject({ code: 'EINVAL' })
    expect(readdirSync(root).sort()).toEqual(before)
    expect(existsSync(join(root, 'escape'))).toBe(false)
    expect(readdirSync(knowledgeDir)).toEqual([])
  })

  it('follows a symlinked knowledge directory itself (the root is resolved first)', async () => {
    const { knowledgeDir } = knowledge()
    const link = join(knowledgeDir, '..', 'knowledge-link')
    symlinkSync(knowledgeDir, link)
    await writeResult(link, 'x/out.md', 'ok')
    expect(readFileSync(join(knowledgeDir, 'x', 'out.md'), 'utf8')).toBe('ok\n')
  })
})
