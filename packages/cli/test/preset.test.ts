import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createFakeRuntime } from '@sallyport/upstream-client/testing'
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { presetDisable, presetSave, presetSignout, presetUse } from '../src/commands/preset.ts'
import { describeFailure, EXIT } from '../src/exit-codes.ts'
import type { Io } from '../src/io.ts'
import { stackLayout } from '../src/stack/layout.ts'
import { loadStackConfig } from '../src/stack/stack-config.ts'
import { readStackEnv } from '../src/stack/stack-env.ts'
import { resolveStackPlan } from '../src/stack/stack-plan.ts'
import { useTempStack } from './temp-stack.ts'

// `sallyport preset …` against a fake runtime at the stack's native address: the commands find the
// runtime and its password from the stack, read the operator policy file, print what the runtime
// confirmed, never a key, and map refusals to exit codes.

const stack = useTempStack({ init: 'in-process' })
let fake: ReturnType<typeof createFakeRuntime>
const server = setupServer()
let out = ''
let err = ''
const io = (): Io => ({
  out: (text) => {
    out += text
  },
  err: (text) => {
    err += text
  },
  env: {},
})

beforeAll(async () => {
  // The fake answers where the commands look for the runtime: the stack plan's native address.
  const layout = stackLayout(stack.dir)
  const config = await loadStackConfig(layout.configFile)
  const plan = resolveStackPlan({ layout, config, env: {}, recorded: await readStackEnv(layout) })
  fake = createFakeRuntime({
    baseUrl: plan.gateway.nativeUrl ?? 'http://127.0.0.1:3810',
    username: plan.gateway.nativeUsername,
    password: readFileSync(join(stack.dir, 'state', 'native-password'), 'utf8').trim(),
    directory: join(stack.dir, 'workspace'),
  })
  server.use(...fake.handlers)
  server.listen({ onUnhandledRequest: 'error' })
})
beforeEach(() => {
  out = ''
  err = ''
  fake.state.globalConfig = { model: 'fake/fake-model' }
  fake.state.projectConfig = {}
  fake.state.auth.clear()
  writeFileSync(join(stack.dir, 'config', 'opencode', 'opencode.json'), '{}\n')
})
afterAll(() => server.close())

const save = (extra: Record<string, string> = {}) =>
  presetSave(
    {
      dir: stack.dir,
      id: 'local',
      name: 'llama.cpp',
      baseUrl: 'http://localhost:8080',
      model: 'qwen2.5-coder:7b',
      ...extra,
    },
    io(),
  )

describe('sallyport preset', () => {
  it('save stores the preset in the running runtime and says what it confirmed, with advice on the URL', async () => {
    await save({ key: 'sk-local-0123456789' })
    expect(out).toBe(
      'preset local saved (confirmed by the effective configuration); its key is stored in the runtime\n',
    )
    expect(err).toContain('/v1')
    expect(err).toContain('localhost is the machine the assistant runtime runs on')
    expect(err).toContain('a reload can interrupt work')
    expect(out + err).not.toContain('sk-local-0123456789')
    expect(fake.state.globalConfig.provider).toHaveProperty('local')
    expect(fake.state.auth.get('local')).toEqual({ type: 'api', key: 'sk-local-0123456789' })
  })

  it('use sets the default model; refused (exit 5) when the operator policy file pins another one', async () => {
    await save()
    out = ''
    await presetUse({ dir: stack.dir, id: 'local', model: 'qwen2.5-coder:7b' }, io())
    expect(out).toBe('default model local/qwen2.5-coder:7b (confirmed by the effective configuration)\n')
    writeFileSync(join(stack.dir, 'config', 'opencode', 'opencode.json'), '{"model": "fake/fake-model"}\n')
    const error = await presetUse({ dir: stack.dir, id: 'local', model: 'other' }, io()).catch(
      (e: unknown) => e,
    )
    expect(describeFailure(error)).toEqual({
      exitCode: EXIT.conflict,
      message: expect.stringContaining('config/opencode/opencode.json sets the model to fake/fake-model'),
    })
    expect(fake.state.globalConfig.model).toBe('local/qwen2.5-coder:7b')
  })

  it('a save the operator policy keeps from taking effect is reported and exits 5; use is refused', async () => {
    writeFileSync(
      join(stack.dir, 'config', 'opencode', 'opencode.json'),
      '{"disabled_providers": ["local"]}\n',
    )
    const error = await save().catch((e: unknown) => e)
    expect(out).toContain(
      'preset local saved (saved, but not in effect: the operator policy file config/opencode/opencode.json disables provider local',
    )
    expect(describeFailure(error).exitCode).toBe(EXIT.conflict)
    const refused = await presetUse({ dir: stack.dir, id: 'local', model: 'qwen2.5-coder:7b' }, io()).catch(
      (e: unknown) => e,
    )
    expect(describeFailure(refused)).toEqual({
      exitCode: EXIT.conflict,
      message: expect.stringContaining('disables provider local'),
    })
    expect(fake.state.globalConfig.model).toBe('fake/fake-model')
  })

  it('disable and signout keep the settings; --json prints the result', async () => {
    await save({ key: 'sk-0123456789' })
    out = ''
    await presetDisable({ dir: stack.dir, id: 'local', json: true }, io())
    expect(JSON.parse(out)).toEqual({
      id: 'local',
      alreadyDisabled: false,
      confirmation: { status: 'confirmed' },
    })
    out = ''
    await presetSignout({ dir: stack.dir, id: 'local' }, io())
    expect(out).toContain('key removed')
    expect(fake.state.auth.has('local')).toBe(false)
    expect(fake.state.globalConfig.provider).toHaveProperty('local')
  })

  it('maps bad input to exit 2 and an unknown preset to exit 4, sending nothing', async () => {
    const before = fake.requests.length
    const bad = await save({ baseUrl: 'http://user:hunter2@host/v1' }).catch((e: unknown) => e)
    expect(describeFailure(bad).exitCode).toBe(EXIT.usage)
    expect(describeFailure(bad).message).not.toContain('hunter2')
    const missing = await presetUse({ dir: stack.dir, id: 'nothing', model: 'm' }, io()).catch(
      (e: unknown) => e,
    )
    expect(describeFailure(missing).exitCode).toBe(EXIT.notFound)
    expect(fake.requests.slice(before).every((r) => r.method === 'GET')).toBe(true)
  })
})

describe('sallyport preset and the comments of the preferences file', () => {
  it('refuses a change when the file in force is opencode.json with comments (the runtime would drop them)', async () => {
    const file = join(stack.dir, 'config', 'assistant', 'opencode.json')
    const original = readFileSync(file, 'utf8')
    writeFileSync(file, `// my notes\n${original}`)
    try {
      const before = fake.requests.length
      const error = await save().catch((e: unknown) => e)
      expect(describeFailure(error)).toEqual({
        exitCode: EXIT.stack,
        message: expect.stringContaining('Rename it to opencode.jsonc'),
      })
      expect(fake.requests.length).toBe(before)
      // Reading commands still work.
      await presetSignout({ dir: stack.dir, id: 'local' }, io())
    } finally {
      writeFileSync(file, original)
    }
  })
})
