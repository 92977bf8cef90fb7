import { describe, expect, it } from 'vitest'
import { defaultStackConfig, validateStackConfig } from './stack-config.ts'

const withModerator = (moderator: Record<string, unknown>) => ({
  ...defaultStackConfig('UTC'),
  moderator: { ...defaultStackConfig('UTC').moderator, ...moderator },
})

describe('validateStackConfig: the moderator section', () => {
  it('accepts the defaults init writes, with no model (the assistant small_model, else model, is used)', () => {
    const result = validateStackConfig(JSON.parse(JSON.stringify(defaultStackConfig('UTC'))))
    expect(result).toMatchObject({
      value: { moderator: { port: 4097, deadlineMs: 20_000, concurrency: 2, queueLimit: 32 } },
    })
    expect('value' in result && result.value.moderator.model).toBeUndefined()
  })

  it.each([true, false])('refuses moderator.enabled (%s): there is no off switch', (enabled) => {
    expect(validateStackConfig(withModerator({ enabled }))).toEqual({
      errors: [expect.stringMatching(/^moderator\.enabled: the moderator is always part of the stack/)],
    })
  })

  it.each(['haiku', 'a/', '/b', 'a b/c', ''])(
    'refuses moderator.model %j (must be provider/model)',
    (model) => {
      const result = validateStackConfig(withModerator({ model }))
      expect(result).toEqual({ errors: [expect.stringMatching(/^moderator\.model: /)] })
    },
  )

  it('accepts moderator.model provider/model and bounded deadline, pool and queue', () => {
    expect(validateStackConfig(withModerator({ model: 'anthropic/claude-haiku-4-5' }))).toMatchObject({
      value: { moderator: { model: 'anthropic/claude-haiku-4-5' } },
    })
    for (const [key, value] of [
      ['deadlineMs', 999],
      ['concurrency', 0],
      ['queueLimit', -1],
      ['deadlineMs', 120_001],
    ] as const)
      expect(validateStackConfig(withModerator({ [key]: value }))).toEqual({
        errors: [expect.stringMatching(new RegExp(`^moderator\\.${key}: `))],
      })
  })
})

describe('validateStackConfig: the scheduler section of older stacks', () => {
  it('accepts no scheduler section and the legacy `"enabled": false`', () => {
    expect(validateStackConfig(JSON.parse(JSON.stringify(defaultStackConfig('UTC'))))).toHaveProperty('value')
    expect(
      validateStackConfig({ ...defaultStackConfig('UTC'), scheduler: { enabled: false } }),
    ).toHaveProperty('value')
  })

  it.each([true, ['digest'], 'digest'])(
    'refuses scheduler.enabled %j: activation lives in config/akm/config.json',
    (enabled) => {
      expect(validateStackConfig({ ...defaultStackConfig('UTC'), scheduler: { enabled } })).toEqual({
        errors: [
          expect.stringMatching(
            /^scheduler\.enabled: activation moved to scheduler\.enabled of config\/akm\/config\.json/,
          ),
        ],
      })
    },
  )
})
