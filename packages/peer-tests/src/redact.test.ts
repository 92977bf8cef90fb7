import { describe, expect, it } from 'vitest'
import { redact } from './redact.ts'

describe('redact', () => {
  it('replaces every occurrence of every secret', () => {
    expect(redact('a agk_secret1 b agk_secret1 c agk_other22', ['agk_secret1', 'agk_other22'])).toBe(
      'a [redacted] b [redacted] c [redacted]',
    )
  })

  it('leaves text without secrets unchanged', () => {
    expect(redact('nothing here', ['agk_secret1'])).toBe('nothing here')
  })

  it('refuses secrets too short to redact safely', () => {
    expect(() => redact('x', ['short'])).toThrow(RangeError)
  })
})
