import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isProcessAlive as alive, liveProcessGroupCount } from '@sallyport/runtime-process'
import { afterAll, describe, expect, it } from 'vitest'
import { startRuntime, TestkitError, waitFor } from '../src/index.ts'

// Failure and shutdown paths of startRuntime, driven by a fake `opencode` (fixtures/fake-opencode.mjs).

const fake = fileURLToPath(new URL('./fixtures/fake-opencode.mjs', import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), 'testkit-lifecycle-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const readPid = (file: string): Promise<number> =>
  waitFor(() => existsSync(file) && Number(readFileSync(file, 'utf8')), { description: `pid in ${file}` })

describe('startRuntime lifecycle (fake binary)', () => {
  it('fails with ERR_TESTKIT_RUNTIME_EXITED and the log tail when the process exits early', async () => {
    const error = await startRuntime({ binary: fake, user: 'current', env: { FAKE_MODE: 'exit' } }).catch(
      (e) => e,
    )
    expect(TestkitError.isInstance(error)).toBe(true)
    expect(error.code).toBe('ERR_TESTKIT_RUNTIME_EXITED')
    expect(error.message).toContain('fatal: fake failure for the test')
    expect(error.message).toContain('code 3')
  })

  it('fails with ERR_TESTKIT_RUNTIME_EXITED when the binary cannot be spawned', async () => {
    const error = await startRuntime({ binary: join(scratch, 'missing'), user: 'current' }).catch((e) => e)
    expect(error).toMatchObject({
      code: 'ERR_TESTKIT_RUNTIME_EXITED',
      message: expect.stringContaining('ENOENT'),
    })
  })

  it('times out without a listening line and kills the process group', async () => {
    const pidFile = join(scratch, 'silent.pid')
    const childFile = join(scratch, 'silent-child.pid')
    const error = await startRuntime({
      binary: fake,
      user: 'current',
      startTimeoutMs: 1_500,
      env: { FAKE_MODE: 'silent', FAKE_PID_FILE: pidFile, FAKE_CHILD_PID_FILE: childFile },
    }).catch((e) => e)
    expect(error).toMatchObject({
      code: 'ERR_TESTKIT_RUNTIME_TIMEOUT',
      message: expect.stringContaining('no listening line'),
    })
    const [pid, child] = [await readPid(pidFile), await readPid(childFile)]
    await waitFor(() => !alive(pid) && !alive(child), { description: 'fake runtime and its child gone' })
  })

  it('stop() escalates to SIGKILL when SIGTERM is ignored and kills the children too', async () => {
    const childFile = join(scratch, 'healthy-child.pid')
    const runtime = await startRuntime({
      binary: fake,
      user: 'current',
      stopGraceMs: 300,
      env: { FAKE_CHILD_PID_FILE: childFile },
    })
    expect(runtime.startupMs).toBeGreaterThanOrEqual(runtime.listeningMs)
    expect((await fetch(`${runtime.url}/global/health`)).status).toBe(401)
    expect((await runtime.fetch('/global/health')).status).toBe(200)
    const child = await readPid(childFile)
    expect(alive(child)).toBe(true)
    const started = performance.now()
    await runtime.stop()
    expect(performance.now() - started).toBeGreaterThanOrEqual(250)
    expect(runtime.logs()).toContain('ignoring SIGTERM')
    expect(alive(runtime.pid)).toBe(false)
    await waitFor(() => !alive(child), { description: 'grandchild gone' })
    expect(existsSync(runtime.tempDir)).toBe(false)
    expect(liveProcessGroupCount()).toBe(0)
  })

  it('retries on another port when the chosen one was taken meanwhile', async () => {
    const state = join(scratch, 'port-state')
    const runtime = await startRuntime({
      binary: fake,
      user: 'current',
      stopGraceMs: 0,
      env: { FAKE_MODE: 'port-taken-once', FAKE_STATE: state },
    })
    expect(existsSync(state)).toBe(true)
    expect((await runtime.fetch('/global/health')).status).toBe(200)
    await runtime.stop()
  })

  it('does not retry a port the caller chose', async () => {
    const error = await startRuntime({
      binary: fake,
      user: 'current',
      port: 1,
      env: { FAKE_MODE: 'port-taken-once', FAKE_STATE: join(scratch, 'fixed-port-state') },
    }).catch((e) => e)
    expect(error).toMatchObject({
      code: 'ERR_TESTKIT_RUNTIME_EXITED',
      message: expect.stringContaining('ServeError'),
    })
  })

  it("restarts a killed runtime in its sandbox, on its port, with its password; the sandbox stays the first handle's", async () => {
    const first = await startRuntime({
      binary: fake,
      user: 'current',
      stopGraceMs: 0,
      password: 'p'.repeat(24),
    })
    const port = Number(new URL(first.url).port)
    process.kill(-first.pid, 'SIGKILL')
    await first.exitCode
    expect(existsSync(first.tempDir)).toBe(true)
    const second = await startRuntime({
      binary: fake,
      user: 'current',
      stopGraceMs: 0,
      sandbox: first.sandbox,
      port,
      username: first.username,
      password: first.password,
    })
    expect(second.url).toBe(first.url)
    expect(second.tempDir).toBe(first.tempDir)
    expect(
      (await fetch(`${second.url}/global/health`, { headers: { authorization: first.authHeader } })).status,
    ).toBe(200)
    await second.stop()
    expect(existsSync(first.tempDir)).toBe(true)
    await first.stop()
    expect(existsSync(first.tempDir)).toBe(false)
  })

  it('keeps the temp dir with keep: true', async () => {
    const runtime = await startRuntime({ binary: fake, user: 'current', keep: true, stopGraceMs: 0 })
    await runtime.stop()
    expect(existsSync(join(runtime.configDir, 'opencode.json'))).toBe(true)
    rmSync(runtime.tempDir, { recursive: true, force: true })
  })

  it('rejects invalid options before starting anything', async () => {
    await expect(startRuntime({ startTimeoutMs: 0 })).rejects.toThrow(RangeError)
    await expect(startRuntime({ stopGraceMs: -1 })).rejects.toThrow(RangeError)
  })
})
