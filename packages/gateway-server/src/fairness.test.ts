import { describe, expect, it } from 'vitest'
import { fairnessKey, withFairnessKey } from './fairness.js'

describe('fairnessKey', () => {
  it('is the credential of the request being handled, across awaits, and undefined outside one', async () => {
    expect(fairnessKey()).toBeUndefined()
    const seen = await Promise.all(
      ['alice', 'bob'].map((who) =>
        withFairnessKey(who, async () => {
          await new Promise((resolve) => setTimeout(resolve, 5))
          return fairnessKey()
        }),
      ),
    )
    expect(seen).toEqual(['alice', 'bob'])
    expect(fairnessKey()).toBeUndefined()
  })
})
