import { describe, expect, it } from 'vitest'
import { createReadSharing } from './share-next.js'

/** A read that stays open until released; counts starts. */
function heldReads() {
  const pending: Array<(value: string) => void> = []
  let started = 0
  const read = (key: string) =>
    new Promise<string>((resolve) => {
      const n = ++started
      pending.push(() => resolve(`${key}#${n}`))
    })
  return { read, started: () => started, release: () => pending.shift()?.('') }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('createReadSharing', () => {
  it('runs one read per key at a time; callers during it share the next one, started after they called', async () => {
    const held = heldReads()
    const shared = createReadSharing(held.read)
    const first = shared('all')
    const during = Array.from({ length: 50 }, () => shared('all'))
    expect(held.started()).toBe(1)
    expect(new Set(during).size).toBe(1) // one promise for all fifty
    held.release()
    expect(await first).toBe('all#1')
    await tick()
    expect(held.started()).toBe(2) // the next read starts once the first ended
    held.release()
    expect(await Promise.all(during)).toEqual(Array(50).fill('all#2'))
    // Idle again: the next caller starts a read of its own at once.
    const later = shared('all')
    expect(held.started()).toBe(3)
    held.release()
    expect(await later).toBe('all#3')
  })

  it('keeps keys apart, and a failed read neither sticks nor stops the next', async () => {
    let calls = 0
    const shared = createReadSharing(async (key: string) => {
      calls++
      if (key === 'bad' && calls === 1) throw new Error('runtime down')
      return key
    })
    const [bad, again, other] = [shared('bad'), shared('bad'), shared('other')]
    await expect(bad).rejects.toThrow('runtime down')
    expect(await again).toBe('bad')
    expect(await other).toBe('other')
    expect(await shared('bad')).toBe('bad')
  })
})
