import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { stackLayout } from '../../stack/layout.ts'
import { defaultStackConfig } from '../../stack/stack-config.ts'
import { moderatorModelChecks } from './moderator-model-check.ts'

const temps: string[] = []
afterEach(() => {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true })
})

function stack(prefs: string | undefined) {
  const root = mkdtempSync(join(tmpdir(), 'sallyport-modcheck-'))
  temps.push(root)
  const layout = stackLayout(root)
  if (prefs !== undefined) {
    mkdirSync(layout.userConfigDir, { recursive: true })
    writeFileSync(join(layout.userConfigDir, 'opencode.json'), prefs)
  }
  return layout
}

describe('moderatorModelChecks', () => {
  it('names moderator.model when the stack file sets it', async () => {
    const config = {
      ...defaultStackConfig('UTC'),
      moderator: { ...defaultStackConfig('UTC').moderator, model: 'p/m' },
    }
    expect(await moderatorModelChecks(stack(undefined), config)).toMatchObject([
      { status: 'ok', detail: 'p/m (moderator.model)' },
    ])
  })

  it("falls back to the assistant's small_model, then its model", async () => {
    const config = defaultStackConfig('UTC')
    expect(
      await moderatorModelChecks(stack('{"small_model":"a/small","model":"a/big"}'), config),
    ).toMatchObject([{ status: 'ok', detail: "a/small (the assistant's small_model)" }])
    expect(await moderatorModelChecks(stack('{"model":"a/big"}'), config)).toMatchObject([
      { status: 'ok', detail: "a/big (the assistant's model)" },
    ])
  })

  it('warns when no model is set (escalated input would be blocked), and when it cannot tell', async () => {
    const config = defaultStackConfig('UTC')
    expect(await moderatorModelChecks(stack('{}'), config)).toMatchObject([{ status: 'warn' }])
    expect(await moderatorModelChecks(stack('{ // jsonc\n}'), config)).toMatchObject([{ status: 'warn' }])
  })
})
