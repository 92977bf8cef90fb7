import { describe, expect, it } from 'vitest'
import { modelWarning } from './model-warning.ts'

/** A runtime answering `GET /config` and `GET /config/providers` as the real one does (shapes measured on 1.18.33). */
function runtime(model: string | undefined, connected: string[], defaults: Record<string, string> = {}) {
  return {
    getConfig: async () => (model === undefined ? {} : { model }),
    configuredProviders: async () => ({
      providers: connected.map((id) => ({ id })),
      default: Object.fromEntries(Object.entries(defaults).filter(([id]) => connected.includes(id))),
    }),
  }
}

describe('modelWarning', () => {
  it("warns of the runtime's network fallback when no model is configured, naming it", async () => {
    const warning = await modelWarning(
      runtime(undefined, ['opencode'], { opencode: 'big-pickle', openai: 'gpt-x' }),
    )
    expect(warning?.fallback).toBe('opencode/big-pickle')
    expect(warning?.message).toMatch(
      /^no model provider is configured: .*opencode\/big-pickle.*internet access/,
    )
    expect(warning?.fix).toMatch(/sallyport preset save/)
  })

  it('says nothing when the configured model has a provider the runtime can use', async () => {
    expect(await modelWarning(runtime('local/qwen', ['local', 'opencode']))).toBeUndefined()
  })

  it('warns when the configured model names a provider the runtime does not have', async () => {
    const warning = await modelWarning(runtime('anthropic/claude', ['opencode']))
    expect(warning?.message).toMatch(
      /anthropic\/claude names provider anthropic, which the assistant runtime does not have/,
    )
  })

  it('does not name a fallback it cannot know', async () => {
    const warning = await modelWarning(runtime(undefined, ['a', 'b'], { a: 'm', b: 'n' }))
    expect(warning?.fallback).toBeUndefined()
    expect(warning?.message).toMatch(/falls back to a default of its own/)
  })

  it('stays silent when the runtime cannot be asked (doctor checks the model for real)', async () => {
    const failing = {
      getConfig: async () => {
        throw new Error('ECONNREFUSED')
      },
      configuredProviders: async () => ({ providers: [], default: {} }),
    }
    expect(await modelWarning(failing)).toBeUndefined()
  })
})
