import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FAKE_PROVIDER_ID, waitFor } from '@sallyport/testkit'
import { describe, expect, it } from 'vitest'
import { runCli } from './cli-process.ts'
import {
  mcpClient,
  modelForFile,
  nativeFetch,
  newScriptedStack,
  type Stops,
  upScriptedStack,
} from './stack-fixture.ts'

// End to end through the BUILT CLI and the real runtime of `sallyport up`: the scripted model
// server plays a custom OpenAI-compatible server that a preset points at. save → use → a real
// agent.run through the gateway answered by that server under the preset's model id → disable →
// signout; the preferences file (opencode.jsonc) keeps its comments; an operator policy that pins
// another model is reported, not bypassed.

const stops: Stops = []
const model = modelForFile(stops)

const KEY = 'sk-custom-0123456789abcdef'

/** The assistant runtime's effective configuration (`GET /config`), read with the stack's native password. */
async function effectiveConfig(dir: string): Promise<Record<string, unknown>> {
  const response = await nativeFetch(dir, '/config')
  expect(response.status).toBe(200)
  return (await response.json()) as Record<string, unknown>
}

describe('sallyport preset (built CLI, real runtime)', () => {
  it('save, use, a real run on the preset, disable and signout; comments kept; the policy file respected', async () => {
    const dir = await newScriptedStack(model, stops)
    // The preferences as opencode.jsonc, full of comments (the runtime keeps them only there).
    const json = join(dir, 'config/assistant/opencode.json')
    const jsonc = join(dir, 'config/assistant/opencode.jsonc')
    const prefs = JSON.parse(readFileSync(json, 'utf8')) as Record<string, unknown>
    const commented = `// My preferences: keep these comments.\n${JSON.stringify(prefs, null, 2)
      .replace('{\n', '{\n  /* the default model and the provider */\n')
      .replace(/("\$schema": [^\n]*,)/, '$1 // trailing')}\n`
    expect(commented).toContain('// trailing')
    writeFileSync(jsonc, commented)
    rmSync(json)
    expect(() => JSON.parse(readFileSync(jsonc, 'utf8'))).toThrow() // it really has comments

    const { cli, ready } = await upScriptedStack(dir, stops)

    // save, with the key on standard input only
    const base = model.baseURL
    const save = await runCli(
      [
        'preset',
        'save',
        'custom',
        '--dir',
        dir,
        '--name',
        'Custom server',
        '--base-url',
        base,
        '--model',
        'custom-model',
        '--key-stdin',
      ],
      { input: `${KEY}\n` },
    )
    expect(save.stderr).toContain('a reload can interrupt work')
    expect(save.code, save.stderr).toBe(0)
    expect(save.stdout).toContain('preset custom saved (confirmed by the effective configuration)')
    expect(save.stdout + save.stderr).not.toContain(KEY)
    const afterSave = readFileSync(jsonc, 'utf8')
    expect(afterSave).toContain('// My preferences: keep these comments.')
    expect(afterSave).toContain('/* the default model and the provider */')
    expect(afterSave).toContain('// trailing')
    expect(afterSave).toContain('"custom"')
    expect(afterSave).not.toContain(KEY)
    expect(readFileSync(join(dir, 'knowledge/secrets/auth.json'), 'utf8')).toContain(KEY)

    // models: one GET <base URL>/models from beside the runtime; ids only
    const models = await runCli(['preset', 'models', 'custom', '--dir', dir])
    expect(models.code, models.stderr).toBe(0)
    expect(models.stdout).toBe(`${model.model}\n`)
    expect(models.stderr).toContain('not proven to answer')

    // use
    const use = await runCli(['preset', 'use', 'custom', 'custom-model', '--dir', dir])
    expect(use.code, use.stderr).toBe(0)
    expect(use.stdout).toBe('default model custom/custom-model (confirmed by the effective configuration)\n')

    // check: one short request through the runtime with the preset's model (inference only)
    const check = await runCli(['preset', 'check', 'custom', '--dir', dir, '--json'])
    expect(check.code, check.stderr).toBe(0)
    expect(JSON.parse(check.stdout)).toMatchObject({
      model: 'custom/custom-model',
      inference: 'proven',
      toolCalls: 'not proven',
    })

    // A real run through the gateway is answered by the preset's server, under its model id and key.
    const ownerKey = readFileSync(join(dir, 'state/credentials/owner/key'), 'utf8').trim()
    const marker = model.script([{ text: 'answered through the preset' }])
    const client = await mcpClient(String(ready.mcpUrl), ownerKey)
    const run = (await client.callTool({
      name: 'gateway.agent.run',
      arguments: { message: `hello ${marker}`, waitMs: 30_000 },
    })) as { structuredContent?: { status?: string } }
    await client.close()
    expect(run.structuredContent?.status).toBe('completed')
    const asked = model.requestsFor(marker)
    expect(asked.length).toBeGreaterThan(0)
    expect(asked[0]?.body?.model).toBe('custom-model')
    expect(String(asked[0]?.headers.authorization)).toBe(`Bearer ${KEY}`)

    // An operator policy that pins another model: `use` is refused and says where.
    const policy = join(dir, 'config/opencode/opencode.json')
    const original = readFileSync(policy, 'utf8')
    writeFileSync(policy, JSON.stringify({ ...JSON.parse(original), model: `${FAKE_PROVIDER_ID}/fake-1` }))
    const pinned = await runCli(['preset', 'use', 'custom', 'custom-model', '--dir', dir])
    expect(pinned.code).toBe(5)
    expect(pinned.stderr).toContain('config/opencode/opencode.json sets the model to')
    writeFileSync(policy, original)

    // disable keeps the definition and the key; signout removes the key and keeps the definition.
    const disable = await runCli(['preset', 'disable', 'custom', '--dir', dir, '--json'])
    expect(disable.code, disable.stderr).toBe(0)
    expect(JSON.parse(disable.stdout)).toMatchObject({
      alreadyDisabled: false,
      confirmation: { status: 'confirmed' },
    })
    expect(readFileSync(jsonc, 'utf8')).toMatch(/"disabled_providers": \[\s*"custom"\s*\]/)
    const signout = await runCli(['preset', 'signout', 'custom', '--dir', dir])
    expect(signout.code, signout.stderr).toBe(0)
    expect(readFileSync(join(dir, 'knowledge/secrets/auth.json'), 'utf8')).not.toContain(KEY)
    const final = readFileSync(jsonc, 'utf8')
    expect(final).toContain('"custom"')
    expect(final).toContain('// My preferences: keep these comments.')

    // The runtime itself holds to the policy file (its managed layer, wired through the test hook
    // OPENCODE_TEST_MANAGED_CONFIG_DIR), which the operator changes with the stack stopped: after
    // a restart the effective model is the pinned one although the preferences name the preset's.
    // Fails if a runtime upgrade stops honouring that hook.
    cli.child.kill('SIGTERM')
    await waitFor(() => cli.child.exitCode !== null || cli.child.signalCode !== null, { timeoutMs: 30_000 })
    writeFileSync(policy, JSON.stringify({ ...JSON.parse(original), model: `${FAKE_PROVIDER_ID}/fake-1` }))
    const { cli: restarted } = await upScriptedStack(dir, stops)
    expect(readFileSync(jsonc, 'utf8')).toContain('"model": "custom/custom-model"')
    expect((await effectiveConfig(dir)).model).toBe(`${FAKE_PROVIDER_ID}/fake-1`)
    restarted.child.kill('SIGTERM')
  }, 240_000)
})
