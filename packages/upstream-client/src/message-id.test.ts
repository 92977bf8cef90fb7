import { describe, expect, it } from 'vitest'
import { isNativeMessageId, newMessageId } from './message-id.ts'

const hexOf = (id: string) => BigInt(`0x${id.slice(4, 16)}`)

describe('newMessageId', () => {
  it('has the native shape: msg_ + 12 hex + 14 base62', () => {
    const id = newMessageId()
    expect(id).toMatch(/^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
    expect(isNativeMessageId(id)).toBe(true)
  })

  it('is unique and strictly increasing over 100 000 ids minted in a tight loop', () => {
    const ids: string[] = []
    for (let i = 0; i < 100_000; i++) ids.push(newMessageId())
    expect(new Set(ids).size).toBe(ids.length)
    for (let i = 1; i < ids.length; i++) expect((ids[i] ?? '') > (ids[i - 1] ?? '')).toBe(true)
  })

  it('encodes (ms × 4096 + counter) mod 2^48 in the hex part', () => {
    const ms = 4_000_000_000_000 // a future clock, so the process-wide counter is past
    const id = newMessageId(() => ms)
    expect(hexOf(id)).toBe((BigInt(ms) * 4096n) % 2n ** 48n)
  })

  it('counts up within one millisecond and stays ordered', () => {
    const ms = 4_000_000_001_000
    const ids = Array.from({ length: 5 }, () => newMessageId(() => ms))
    const values = ids.map(hexOf)
    for (let i = 1; i < values.length; i++) expect(values[i]).toBe((values[i - 1] ?? 0n) + 1n)
    expect([...ids].sort()).toEqual(ids)
  })

  it('never goes backwards when the clock steps back', () => {
    const a = newMessageId(() => 4_000_000_002_000)
    const b = newMessageId(() => 4_000_000_001_500)
    expect(hexOf(b)).toBeGreaterThan(hexOf(a))
  })

  it('draws base62 characters without bias by rejecting bytes ≥ 248', () => {
    const bytes = [255, 248, 0, 61, 62, 247]
    let call = 0
    const random = (size: number) =>
      Uint8Array.from({ length: size }, () => bytes[call++ % bytes.length] ?? 0)
    const id = newMessageId(() => 4_000_000_003_000, random)
    // 0 → '0', 61 → 'z', 62 → '0', 247 → 247 % 62 = 61 → 'z'; 255 and 248 are skipped.
    expect(id.slice(16)).toBe('0z0z0z0z0z0z0z')
  })

  it('isNativeMessageId rejects other shapes', () => {
    expect(isNativeMessageId('msg_gwjob_0001')).toBe(false)
    expect(isNativeMessageId('ses_0123456789abABCDEFGHIJKLMN')).toBe(false)
  })
})
