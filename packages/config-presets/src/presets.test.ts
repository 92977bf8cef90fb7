import { createUpstreamClient, type UpstreamClient } from '@sallyport/upstream-client'
import { createFakeRuntime } from '@sallyport/upstream-client/testing'
import { HttpResponse, http } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { PresetError } from './errors.js'
import { createPresets, type OperatorPolicy, type Presets } from './presets.js'

// Every request a preset operation makes, against the fake runtime (which merges objects and
// replaces arrays, as the real one was measured to do): method, path and the exact narrow body,
// nothing else sent, nothing sent at all for bad input or a conflict with the operator policy.

const fake = createFakeRuntime({ password: 'native-password', directory: '/stack/workspace' })
const server = setupServer(...fake.handlers)
interface Sent {
  method: string
  path: string
  body?: unknown
}
const sent: Sent[] = []
const clients: UpstreamClient[] = []

beforeAll(() => {
  server.listen({ onUnhandledRequest: 'error' })
  server.events.on('request:start', async ({ request }) => {
    const text = await request.clone().text()
    sent.push({
      method: request.method,
      path: new URL(request.url).pathname,
      ...(text ? { body: JSON.parse(text) } : {}),
    })
  })
})
beforeEach(() => {
  sent.length = 0
  fake.state.globalConfig = {
    $schema: 'https://opencode.ai/config.json',
    model: 'fake/fake-model',
    share: 'disabled',
  }
  fake.state.projectConfig = {}
  fake.state.auth.clear()
})
afterEach(() => {
  for (const c of clients.splice(0)) c.close()
  server.resetHandlers()
})
afterAll(() => server.close())

function presets(policy?: OperatorPolicy): Presets {
  const runtime = createUpstreamClient(fake.clientOptions)
  clients.push(runtime)
  return createPresets({ runtime, ...(policy ? { policy } : {}) })
}

const LOCAL = {
  id: 'local',
  name: 'Local llama.cpp',
  baseUrl: 'http://10.0.0.5:8080/v1/',
  model: 'qwen2.5-coder:7b',
}
const writes = () => sent.filter((s) => s.method !== 'GET')

describe('save', () => {
  it('sends one narrow PATCH with the server name, base URL and model, then reads the effective config back', async () => {
    const result = await presets().save(LOCAL)
    expect(sent).toEqual([
      { method: 'GET', path: '/global/config' },
      {
        method: 'PATCH',
        path: '/global/config',
        body: {
          provider: {
            local: {
              name: 'Local llama.cpp',
              npm: '@ai-sdk/openai-compatible',
              options: { baseURL: 'http://10.0.0.5:8080/v1' },
              models: { 'qwen2.5-coder:7b': { name: 'qwen2.5-coder:7b' } },
            },
          },
        },
      },
      { method: 'GET', path: '/config' },
    ])
    expect(result).toEqual({
      reenabled: false,
      allowed: false,
      keyStored: false,
      confirmation: { status: 'confirmed' },
    })
    // Unrelated settings stay.
    expect(fake.state.globalConfig).toMatchObject({ model: 'fake/fake-model', share: 'disabled' })
  })

  it('stores the key through PUT /auth/<id> only, never in the preferences', async () => {
    const key = 'sk-local-0123456789abcdef'
    await presets().save({ ...LOCAL, key })
    expect(writes().map((s) => `${s.method} ${s.path}`)).toEqual(['PATCH /global/config', 'PUT /auth/local'])
    expect(sent.find((s) => s.method === 'PUT')?.body).toEqual({ type: 'api', key })
    expect(JSON.stringify(fake.state.globalConfig)).not.toContain(key)
    expect(fake.state.auth.get('local')).toEqual({ type: 'api', key })
  })

  it('re-enables only its own id when it was disabled', async () => {
    fake.state.globalConfig.disabled_providers = ['openai', 'local', 'other']
    const result = await presets().save(LOCAL)
    expect(sent[1]?.body).toMatchObject({ disabled_providers: ['openai', 'other'] })
    expect(result.reenabled).toBe(true)
    expect(fake.state.globalConfig.disabled_providers).toEqual(['openai', 'other'])
  })

  it('adds its id to an allow-list of the preferences (enabled_providers), keeping the others', async () => {
    fake.state.globalConfig.enabled_providers = ['fake']
    const result = await presets().save(LOCAL)
    expect(sent[1]?.body).toMatchObject({ enabled_providers: ['fake', 'local'] })
    expect(result).toMatchObject({ reenabled: false, allowed: true, confirmation: { status: 'confirmed' } })
  })

  it('reports an operator policy that disables the provider, and does not touch the policy', async () => {
    const policy = { file: 'config/opencode/opencode.json', config: { enabled_providers: ['fake'] } }
    const result = await presets(policy).save(LOCAL)
    expect(result.confirmation).toEqual({
      status: 'overridden',
      reason: expect.stringContaining(
        'config/opencode/opencode.json enables only the providers it lists, not local',
      ),
    })
  })

  it('says "unconfirmed" when the effective config does not show it or cannot be read', async () => {
    server.use(
      http.get(`${fake.clientOptions.baseUrl}/config`, () => HttpResponse.json({ model: 'fake/fake-model' })),
    )
    expect((await presets().save(LOCAL)).confirmation).toMatchObject({ status: 'unconfirmed' })
    server.use(
      http.get(`${fake.clientOptions.baseUrl}/config`, () => new HttpResponse('boom', { status: 500 })),
    )
    const result = await presets().save(LOCAL)
    expect(result.confirmation).toMatchObject({
      status: 'unconfirmed',
      reason: expect.stringContaining('could not be read back'),
    })
  })

  it.each([
    [{ id: 'Local' }, 'ERR_PRESET_INVALID_ID'],
    [{ id: 'a/b' }, 'ERR_PRESET_INVALID_ID'],
    [{ name: ' ' }, 'ERR_PRESET_INVALID_NAME'],
    [{ name: 'two\nlines' }, 'ERR_PRESET_INVALID_NAME'],
    [{ baseUrl: 'ftp://host/v1' }, 'ERR_PRESET_INVALID_URL'],
    [{ baseUrl: 'http://user:secret@host/v1' }, 'ERR_PRESET_INVALID_URL'],
    [{ baseUrl: 'http://host/v1?key=secret' }, 'ERR_PRESET_INVALID_URL'],
    [{ model: '' }, 'ERR_PRESET_INVALID_MODEL'],
    [{ model: 'a b' }, 'ERR_PRESET_INVALID_MODEL'],
    // Names every JavaScript object has: as a model id, `constructor` made the runtime unable to
    // resolve any model (found by a review).
    [{ model: 'constructor' }, 'ERR_PRESET_INVALID_MODEL'],
    [{ model: 'hasOwnProperty' }, 'ERR_PRESET_INVALID_MODEL'],
    [{ model: '__proto__' }, 'ERR_PRESET_INVALID_MODEL'],
    [{ id: 'constructor' }, 'ERR_PRESET_INVALID_ID'],
    [{ key: 'two words' }, 'ERR_PRESET_INVALID_KEY'],
    [{ key: '' }, 'ERR_PRESET_INVALID_KEY'],
  ] as const)('refuses %j with %s and sends nothing', async (change, code) => {
    await expect(presets().save({ ...LOCAL, ...change })).rejects.toMatchObject({ code })
    expect(sent).toEqual([])
  })

  it('never puts a key or a URL password in an error message', async () => {
    const key = 'sk-never-shown-0123456789'
    server.use(http.put('*/auth/:id', () => new HttpResponse('nope', { status: 500 })))
    const error = await presets()
      .save({ ...LOCAL, key })
      .catch((e: unknown) => e)
    expect(PresetError.isInstance(error)).toBe(true)
    expect((error as Error).message).toContain('its settings are saved')
    expect((error as Error).message).not.toContain(key)
    const urlError = await presets()
      .save({ ...LOCAL, baseUrl: 'http://admin:hunter2@host/v1' })
      .catch((e: unknown) => e)
    expect((urlError as Error).message).not.toContain('hunter2')
  })
})

describe('use', () => {
  it('patches only the model, as <id>/<model>, and confirms it', async () => {
    await presets().save(LOCAL)
    sent.length = 0
    const result = await presets().use('local', 'qwen2.5-coder:7b')
    expect(writes()).toEqual([
      { method: 'PATCH', path: '/global/config', body: { model: 'local/qwen2.5-coder:7b' } },
    ])
    expect(result).toEqual({ model: 'local/qwen2.5-coder:7b', confirmation: { status: 'confirmed' } })
  })

  it('is refused, with nothing sent, when the operator policy pins another model', async () => {
    await presets().save(LOCAL)
    sent.length = 0
    const policy = { file: 'config/opencode/opencode.json', config: { model: 'fake/fake-model' } }
    await expect(presets(policy).use('local', 'qwen2.5-coder:7b')).rejects.toMatchObject({
      code: 'ERR_PRESET_POLICY',
      message: expect.stringContaining('config/opencode/opencode.json sets the model to fake/fake-model'),
    })
    expect(sent).toEqual([])
  })

  it.each([
    [{ disabled_providers: ['local'] }, 'disables provider local'],
    [{ enabled_providers: ['fake'] }, 'enables only the providers it lists, not local'],
  ])(
    'is refused, with nothing sent, when the operator policy %j keeps the provider from being used',
    async (config, says) => {
      await presets().save(LOCAL)
      sent.length = 0
      const policy = { file: 'config/opencode/opencode.json', config }
      await expect(presets(policy).use('local', 'qwen2.5-coder:7b')).rejects.toMatchObject({
        code: 'ERR_PRESET_POLICY',
        message: expect.stringContaining(says),
      })
      expect(sent).toEqual([])
    },
  )

  it('reports a model that a higher-priority configuration overrides', async () => {
    await presets().save(LOCAL)
    fake.state.projectConfig = { model: 'fake/fake-model' }
    const result = await presets().use('local', 'qwen2.5-coder:7b')
    expect(result.confirmation).toMatchObject({
      status: 'overridden',
      reason: expect.stringContaining('fake/fake-model'),
    })
  })

  it('refuses a preset that was never saved', async () => {
    await expect(presets().use('nothing', 'm')).rejects.toMatchObject({ code: 'ERR_PRESET_NOT_FOUND' })
    expect(writes()).toEqual([])
  })
})

describe('disable and signout', () => {
  it('disable adds the id to disabled_providers, keeping the others, the definition and the key', async () => {
    await presets().save({ ...LOCAL, key: 'sk-0123456789' })
    fake.state.globalConfig.disabled_providers = ['openai']
    sent.length = 0
    const result = await presets().disable('local')
    expect(writes()).toEqual([
      { method: 'PATCH', path: '/global/config', body: { disabled_providers: ['openai', 'local'] } },
    ])
    expect(result).toEqual({ alreadyDisabled: false, confirmation: { status: 'confirmed' } })
    expect(fake.state.globalConfig.provider).toHaveProperty('local')
    expect(fake.state.auth.has('local')).toBe(true)
    // Saving it again re-enables it, and only it.
    await presets().save(LOCAL)
    expect(fake.state.globalConfig.disabled_providers).toEqual(['openai'])
  })

  it('disable sends nothing when the preset is already disabled', async () => {
    await presets().save(LOCAL)
    fake.state.globalConfig.disabled_providers = ['local']
    sent.length = 0
    expect(await presets().disable('local')).toMatchObject({ alreadyDisabled: true })
    expect(writes()).toEqual([])
  })

  it('signout deletes the key through DELETE /auth/<id> and nothing else', async () => {
    await presets().save({ ...LOCAL, key: 'sk-0123456789' })
    sent.length = 0
    expect(await presets().signout('local')).toEqual({ removed: true })
    expect(sent).toEqual([{ method: 'DELETE', path: '/auth/local' }])
    expect(fake.state.auth.has('local')).toBe(false)
    expect(fake.state.globalConfig.provider).toHaveProperty('local')
  })
})
