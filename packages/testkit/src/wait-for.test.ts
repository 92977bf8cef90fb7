import { describe, expect, it } from 'vitest'
import { TestkitError } from './errors.ts'
import { waitFor } from './wait-for.ts'

describe('waitFor', () => {
  it('returns the first truthy value', async () => {
    let calls = 0
    await expect(waitFor(() => (++calls >= 3 ? 'ready' : undefined), { intervalMs: 1 })).resolves.toBe(
      'ready',
    )
    expect(calls).toBe(3)
  })

  it('treats exceptions as not yet and reports the last one as cause on timeout', async () => {
    const error = await waitFor(
      () => {
        throw new Error('still down')
      },
      { timeoutMs: 30, intervalMs: 5, description: 'server up' },
    ).catch((e: unknown) => e)
    expect(TestkitError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'ERR_TESTKIT_WAIT_TIMEOUT',
      message: expect.stringContaining('server up'),
    })
    expect(((error as Error).cause as Error).message).toBe('still down')
    expect((error as Error).message).toMatch(/\(last error: still down\)$/)
  })

  it('ends at once with what giveUp returns, without another check', async () => {
    let calls = 0
    let exited = false
    const error = await waitFor(
      () => {
        calls++
        exited = true
        return undefined
      },
      { timeoutMs: 10_000, intervalMs: 5, giveUp: () => (exited ? new Error('process exited') : undefined) },
    ).catch((e: unknown) => e)
    expect((error as Error).message).toBe('process exited')
    expect(calls).toBe(1)
  })

  it('keeps 0 and empty strings as values', async () => {
    await expect(waitFor(() => 0)).resolves.toBe(0)
  })
})
