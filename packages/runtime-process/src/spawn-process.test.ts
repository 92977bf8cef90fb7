import { describe, expect, it, vi } from 'vitest'
import { isProcessAlive, liveProcessGroupCount } from './process-groups.ts'
import { describeExit, spawnProcessGroup } from './spawn-process.ts'

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' }

describe('spawnProcessGroup', () => {
  it('keeps the last 200 lines of both streams once: tail() and the replay to a late listener agree', async () => {
    const child = spawnProcessGroup({
      name: 'printer',
      command: '/bin/sh',
      args: [
        '-c',
        'i=1; while [ $i -le 250 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done; sleep 0.3; echo "out last"',
      ],
      env,
      cwd: process.cwd(),
    })
    await child.exit
    await vi.waitFor(() => expect(child.tail(1)[0]).toBe('out last'), { timeout: 5000 })
    const replayed: [string, string][] = []
    child.onLine((line, stream) => replayed.push([line, stream]))
    expect(replayed).toHaveLength(200)
    expect(replayed.map(([line]) => line)).toEqual(child.tail(200))
    expect(child.tail(500)).toHaveLength(200)
    expect(child.tail()).toHaveLength(20)
    for (const [line, stream] of replayed) expect(stream).toBe(line.startsWith('out') ? 'stdout' : 'stderr')
    expect(replayed.at(-1)).toEqual(['out last', 'stdout'])
    expect(child.output(1)).toEqual([{ text: 'out last', stream: 'stdout' }])
  })

  it('keeps as many lines as asked', async () => {
    const child = spawnProcessGroup({
      name: 'printer',
      command: '/bin/sh',
      args: ['-c', 'for i in 1 2 3 4 5; do echo "line $i"; done; sleep 0.2'],
      env,
      cwd: process.cwd(),
      keepLines: 3,
    })
    await child.exit
    await vi.waitFor(() => expect(child.tail(1)).toEqual(['line 5']))
    expect(child.output().map((line) => line.text)).toEqual(['line 3', 'line 4', 'line 5'])
    expect(() =>
      spawnProcessGroup({ name: 'x', command: 'true', args: [], env, cwd: '/', keepLines: 0 }),
    ).toThrow(RangeError)
  })

  it('stop() escalates to SIGKILL when SIGTERM is ignored and takes the whole group', async () => {
    const child = spawnProcessGroup({
      name: 'stubborn',
      command: '/bin/sh',
      // The shell ignores SIGTERM; its `sleep` child is in the same group.
      args: ['-c', 'trap "" TERM; echo ready; sleep 300 & wait'],
      env,
      cwd: process.cwd(),
    })
    await vi.waitFor(() => expect(child.tail(1)).toEqual(['ready']))
    const started = performance.now()
    const info = await child.stop(300)
    expect(performance.now() - started).toBeGreaterThanOrEqual(250)
    expect(info.signal).toBe('SIGKILL')
    expect(child.exited).toBe(true)
    expect(isProcessAlive(child.pid)).toBe(false)
    // The backgrounded `sleep` may linger as a zombie for a moment until it is reaped.
    await vi.waitFor(() => expect(() => process.kill(-child.pid, 0)).toThrow(/ESRCH/), { timeout: 5000 })
    expect(liveProcessGroupCount()).toBe(0)
    expect(await child.stop(300)).toBe(info) // idempotent
  })

  it('reports a command that cannot be started as an exit with the spawn error', async () => {
    const child = spawnProcessGroup({
      name: 'missing',
      command: '/nonexistent/binary',
      args: [],
      env,
      cwd: process.cwd(),
    })
    const info = await child.exit
    expect(info.error?.message).toMatch(/ENOENT/)
    expect(describeExit(info)).toMatch(/^failed to start: .*ENOENT/)
  })
})

describe('describeExit', () => {
  it.each([
    [{ code: 1, signal: null }, 'exited with code 1'],
    [{ code: null, signal: 'SIGKILL' as const }, 'was killed by SIGKILL'],
    [{ code: null, signal: null, error: new Error('spawn x EACCES') }, 'failed to start: spawn x EACCES'],
  ])('%o → %s', (info, text) => {
    expect(describeExit(info)).toBe(text)
  })
})
