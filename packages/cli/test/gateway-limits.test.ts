import { DEFAULT_LIMITS } from '@sallyport/gateway-server'
import { describe, expect, it } from 'vitest'
import { defaultStackConfig, validateStackConfig } from '../src/stack/stack-config.ts'

describe('sallyport.json gateway.limits', () => {
  it('seeds exactly the gateway’s own defaults, so the file shows what is in force', () => {
    expect(defaultStackConfig('UTC').gateway.limits).toEqual(DEFAULT_LIMITS)
  })

  it('fills in omitted limits (and a file without any) with the defaults', () => {
    const config = structuredClone(defaultStackConfig('UTC')) as unknown as {
      gateway: { limits?: Record<string, number> }
    }
    config.gateway.limits = { concurrentWaits: 4 }
    const result = validateStackConfig(config)
    expect(result).toMatchObject({
      value: { gateway: { limits: { ...DEFAULT_LIMITS, concurrentWaits: 4 } } },
    })
    delete config.gateway.limits
    expect(validateStackConfig(config)).toMatchObject({ value: { gateway: { limits: DEFAULT_LIMITS } } })
  })

  it('refuses a bad or unknown limit with its path', () => {
    const config = structuredClone(defaultStackConfig('UTC')) as unknown as {
      gateway: { limits: Record<string, unknown> }
    }
    config.gateway.limits = { maxBatch: 0, ratePerSecond: 'fast', burst: 3 }
    const result = validateStackConfig(config) as { errors: string[] }
    expect(result.errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^gateway\.limits\.maxBatch: /),
        expect.stringMatching(/^gateway\.limits\.ratePerSecond: /),
        expect.stringMatching(/^gateway\.limits: .*burst/),
      ]),
    )
  })
})
