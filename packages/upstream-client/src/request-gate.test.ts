import { describe, expect, it, vi } from 'vitest'
import { createRequestGate, UNREAD_BODY_MS } from './request-gate.ts'

/** A request the test answers by hand. */
function pending() {
  let answer!: (value: Response) => void
  let fail!: (error: unknown) => void
  const promise = new Promise<Response>((resolve, reject) => {
    answer = resolve
    fail = reject
  })
  return { promise, answer: () => answer(new Response('ok')), fail }
}

/** A few turns of the event loop (a body's end frees its slot on the next turn). */
const tick = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
}

describe('createRequestGate', () => {
  it('holds at most `limit` requests in flight; the others start in order of arrival as slots free', async () => {
    const gate = createRequestGate(2)
    const requests = Array.from({ length: 5 }, pending)
    const started: number[] = []
    // Each caller reads its answer's body, as the client does.
    const results = requests.map((r, i) =>
      gate
        .run(undefined, () => {
          started.push(i)
          return r.promise
        })
        .then((response) => response.text()),
    )
    for (const r of results) r.catch(() => undefined)
    await tick()
    expect(started).toEqual([0, 1])
    expect([gate.inFlight, gate.waiting]).toEqual([2, 3])
    requests[1]?.answer()
    await tick()
    expect(started).toEqual([0, 1, 2])
    requests[0]?.fail(new Error('reset'))
    await tick()
    expect(started).toEqual([0, 1, 2, 3])
    for (const r of requests) r.answer()
    await tick()
    expect(started).toEqual([0, 1, 2, 3, 4])
    await expect(results[0]).rejects.toThrow('reset')
    for (const r of results.slice(1)) await expect(r).resolves.toBe('ok')
    expect([gate.inFlight, gate.waiting]).toEqual([0, 0])
  })

  it('a waiting request whose signal aborts leaves the queue with the reason, and never starts', async () => {
    const gate = createRequestGate(1)
    const first = pending()
    const running = gate.run(undefined, () => first.promise).then((response) => response.text())
    const controller = new AbortController()
    let startedLate = false
    const waiting = gate.run(controller.signal, async () => {
      startedLate = true
      return new Response('late')
    })
    await tick()
    expect(gate.waiting).toBe(1)
    controller.abort(new Error('caller left'))
    await expect(waiting).rejects.toThrow('caller left')
    expect(gate.waiting).toBe(0)
    first.answer()
    await running
    await tick()
    expect(startedLate).toBe(false)
    expect(gate.inFlight).toBe(0)
  })

  it('holds the slot until the body is read to its end (its connection is busy until then)', async () => {
    const gate = createRequestGate(1)
    const first = await gate.run(undefined, async () => new Response('first body'))
    let secondStarted = false
    const second = gate.run(undefined, async () => {
      secondStarted = true
      return new Response('second')
    })
    await tick()
    expect(secondStarted).toBe(false)
    expect(await first.text()).toBe('first body')
    await tick()
    expect(secondStarted).toBe(true)
    expect(await (await second).text()).toBe('second')
  })

  it('frees the slot of a cancelled body, of a bodiless answer, and of a body nobody reads (after a grace)', async () => {
    const gate = createRequestGate(1)
    const cancelled = await gate.run(undefined, async () => new Response('never read'))
    await cancelled.body?.cancel()
    const empty = await gate.run(undefined, async () => new Response(null, { status: 204 }))
    expect(empty.status).toBe(204)
    vi.useFakeTimers()
    try {
      await gate.run(undefined, async () => new Response('forgotten'))
      expect(gate.inFlight).toBe(1)
      vi.advanceTimersByTime(UNREAD_BODY_MS)
      expect(gate.inFlight).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })

  it('refuses at once a request whose signal has already aborted', async () => {
    const gate = createRequestGate(1)
    const controller = new AbortController()
    controller.abort(new Error('gone'))
    await expect(gate.run(controller.signal, async () => new Response('x'))).rejects.toThrow('gone')
    expect(gate.inFlight).toBe(0)
  })

  it('frees the slot when starting the request throws synchronously', async () => {
    const gate = createRequestGate(1)
    await expect(
      gate.run(undefined, () => {
        throw new Error('bad request')
      }),
    ).rejects.toThrow('bad request')
    await expect(gate.run(undefined, async () => new Response('next')).then((r) => r.text())).resolves.toBe(
      'next',
    )
  })

  it('serves waiting requests round-robin across fairness keys, each key in order of arrival', async () => {
    let key: string | undefined
    const gate = createRequestGate(1, () => key)
    const first = pending()
    const started: string[] = []
    const enqueue = (k: string | undefined, name: string) => {
      key = k
      return gate
        .run(undefined, async () => {
          started.push(name)
          return new Response(name)
        })
        .then((response) => response.text())
    }
    const running = gate.run(undefined, () => first.promise).then((response) => response.text())
    // A flood of one key, then another key's requests and one without a key.
    const results = [
      enqueue('storm', 's1'),
      enqueue('storm', 's2'),
      enqueue('storm', 's3'),
      enqueue('owner', 'o1'),
      enqueue('owner', 'o2'),
      enqueue(undefined, 'n1'),
    ]
    expect(gate.waiting).toBe(6)
    first.answer()
    await running
    await Promise.all(results)
    expect(started).toEqual(['s1', 'o1', 'n1', 's2', 'o2', 's3'])
    await tick()
    expect([gate.inFlight, gate.waiting]).toEqual([0, 0])
  })

  it('an aborted waiter leaves its key’s turn without disturbing the others', async () => {
    let key = 'a'
    const gate = createRequestGate(1, () => key)
    const first = pending()
    const running = gate.run(undefined, () => first.promise).then((response) => response.text())
    const started: string[] = []
    const controller = new AbortController()
    const enqueue = (k: string, name: string, signal?: AbortSignal) => {
      key = k
      return gate.run(signal, async () => {
        started.push(name)
        return new Response(name)
      })
    }
    const gone = enqueue('b', 'b1', controller.signal)
    const others = [enqueue('a', 'a1'), enqueue('c', 'c1')]
    controller.abort(new Error('left'))
    await expect(gone).rejects.toThrow('left')
    expect(gate.waiting).toBe(2)
    first.answer()
    await running
    for (const r of others) await (await r).text()
    expect(started).toEqual(['a1', 'c1'])
    await tick()
    expect([gate.inFlight, gate.waiting]).toEqual([0, 0])
  })
  it('runWhole holds its slot until what it runs settles, resolved or rejected, and shares the bound with run', async () => {
    const gate = createRequestGate(1)
    let finishWhole!: (value: string) => void
    const whole = gate.runWhole(undefined, () => new Promise<string>((resolve) => (finishWhole = resolve)))
    const started: string[] = []
    const next = gate.run(undefined, async () => {
      started.push('run')
      return new Response('ok')
    })
    await tick()
    expect(started).toEqual([])
    expect([gate.inFlight, gate.waiting]).toEqual([1, 1])
    finishWhole('done')
    await expect(whole).resolves.toBe('done')
    expect(await (await next).text()).toBe('ok')
    expect(started).toEqual(['run'])
    const failed = gate.runWhole(undefined, async () => {
      throw new Error('cut')
    })
    await expect(failed).rejects.toThrow('cut')
    await tick()
    expect([gate.inFlight, gate.waiting]).toEqual([0, 0])
    const reason = new Error('gone')
    await expect(gate.runWhole(AbortSignal.abort(reason), async () => 'never')).rejects.toBe(reason)
    expect([gate.inFlight, gate.waiting]).toEqual([0, 0])
  })
})
