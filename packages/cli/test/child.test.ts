import { waitFor } from '@agentgate/testkit'
import { describe, expect, it } from 'vitest'
import { spawnChild } from '../src/runtime/child.ts'

describe('spawnChild output buffer', () => {
  it('keeps the last 200 lines of both streams once: tail() and the replay to a late listener agree', async () => {
    const child = spawnChild({
      name: 'printer',
      command: '/bin/sh',
      args: [
        '-c',
        'i=1; while [ $i -le 250 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done; sleep 0.3; echo "out last"',
      ],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      cwd: process.cwd(),
    })
    await child.exit
    await waitFor(() => child.tail(1)[0] === 'out last' || undefined, { timeoutMs: 5000 })
    const replayed: [string, string][] = []
    child.onLine((line, stream) => replayed.push([line, stream]))
    expect(replayed).toHaveLength(200)
    expect(replayed.map(([line]) => line)).toEqual(child.tail(200))
    expect(child.tail(500)).toHaveLength(200)
    expect(child.tail()).toHaveLength(20)
    for (const [line, stream] of replayed) expect(stream).toBe(line.startsWith('out') ? 'stdout' : 'stderr')
    expect(replayed.at(-1)).toEqual(['out last', 'stdout'])
  })
})
