import { describe, expect, it } from 'vitest'
import { stackLayout } from './layout.ts'
import { defaultStackConfig, portClash, type StackConfig } from './stack-config.ts'
import { isLoopback, knownNativePort, resolveStackPlan, type StackPlanInput } from './stack-plan.ts'

const layout = stackLayout('/s')

function config(edit: (c: StackConfig) => void = () => {}): StackConfig {
  const c = structuredClone(defaultStackConfig('UTC'))
  edit(c)
  return c
}

function plan(overrides: Partial<StackPlanInput> = {}) {
  return resolveStackPlan({ layout, config: config(), env: {}, recorded: new Map(), ...overrides })
}

const recordedAt = (port: string, url = `http://127.0.0.1:${port}`) =>
  new Map([
    ['SALLYPORT_NATIVE_PORT', port],
    ['SALLYPORT_NATIVE_URL', url],
  ])

describe('resolveStackPlan: the gateway', () => {
  it.each([
    ['--host beats the environment and the stack file', { host: '10.0.0.1' }, '10.0.0.2', '10.0.0.1'],
    ['SALLYPORT_GATEWAY_HOST beats gateway.host', {}, '10.0.0.2', '10.0.0.2'],
    ['gateway.host when nothing overrides it', {}, undefined, '127.0.0.3'],
  ])('%s', (_name, flags, envHost, expected) => {
    const result = plan({
      config: config((c) => {
        c.gateway.host = '127.0.0.3'
      }),
      env: envHost ? { SALLYPORT_GATEWAY_HOST: envHost } : {},
      flags,
    })
    expect(result.gateway.bindHost).toBe(expected)
    expect(result.listeners[0]).toEqual({ setting: 'gateway.port', host: expected, port: 8787 })
  })

  it.each([
    ['0.0.0.0', '127.0.0.1', 'http://127.0.0.1:8787'],
    ['::', '::1', 'http://[::1]:8787'],
    ['192.168.1.5', '192.168.1.5', 'http://192.168.1.5:8787'],
  ])('a bind on %s is reached on %s', (bindHost, displayHost, base) => {
    const result = plan({ env: { SALLYPORT_GATEWAY_HOST: bindHost } })
    expect(result.gateway).toMatchObject({
      bindHost,
      displayHost,
      mcpUrl: `${base}/mcp`,
      healthUrl: `${base}/health`,
    })
    expect(result.healthTargets[0]).toMatchObject({
      name: 'gateway',
      host: displayHost,
      url: `${base}/health`,
    })
  })

  it('serve --port overrides gateway.port everywhere', () => {
    const result = plan({ flags: { port: 9000 } })
    expect(result.gateway.port).toBe(9000)
    expect(result.gateway.mcpUrl).toBe('http://127.0.0.1:9000/mcp')
    expect(result.listeners[0]?.port).toBe(9000)
  })

  it.each([
    ['127.0.0.1', '1', true],
    ['localhost', '1', true],
    ['::1', '1', true],
    ['0.0.0.0', '1', false],
    ['127.0.0.1', undefined, false],
    ['127.0.0.1', '0', false],
  ])('gateway host %s with SALLYPORT_IMAGE=%s: loopback in the image is %s', (host, image, expected) => {
    const env = { SALLYPORT_GATEWAY_HOST: host, ...(image ? { SALLYPORT_IMAGE: image } : {}) }
    expect(plan({ env }).gateway.loopbackInImage).toBe(expected)
  })

  it('takes the allowed origins from a non-empty GATEWAY_ALLOWED_ORIGINS, else from the stack file', () => {
    const c = config((x) => {
      x.gateway.allowedOrigins = ['https://a.example']
    })
    expect(plan({ config: c, env: { GATEWAY_ALLOWED_ORIGINS: ' ' } }).gateway.allowedOrigins).toEqual([
      'https://a.example',
    ])
    expect(
      plan({ config: c, env: { GATEWAY_ALLOWED_ORIGINS: 'https://b.example, https://c.example' } }).gateway
        .allowedOrigins,
    ).toEqual(['https://b.example', 'https://c.example'])
  })
})

describe('resolveStackPlan: the native server', () => {
  it('uses a port of the stack file as it is', () => {
    const result = plan({
      config: config((c) => {
        c.native.port = 4100
      }),
      recorded: recordedAt('4200'),
    })
    expect(result.native).toMatchObject({ port: 4100, url: 'http://127.0.0.1:4100' })
    expect(result.listeners.map((l) => l.setting)).toEqual(['gateway.port', 'native.port', 'moderator.port'])
  })

  it('"auto" takes the recorded port; unrecorded or malformed, the port is unknown and probed at 3810', () => {
    expect(plan({ recorded: recordedAt('4200') }).native.port).toBe(4200)
    for (const recorded of [new Map(), recordedAt('x'), recordedAt('70000')]) {
      const result = plan({ recorded })
      expect(result.native.port).toBeUndefined()
      expect(result.native.url).toBeUndefined()
      expect(result.listeners.map((l) => l.setting)).toEqual(['gateway.port', 'moderator.port'])
      expect(result.healthTargets[1]).toMatchObject({
        name: 'assistant runtime',
        port: 3810,
        url: 'http://127.0.0.1:3810/global/health',
      })
    }
  })

  it('up: the port given is the one started on, and the gateway forwards there (not to a stale record)', () => {
    const result = plan({ recorded: recordedAt('4200', 'http://10.9.9.9:4200'), nativePort: 4300 })
    expect(result.native).toMatchObject({ port: 4300, url: 'http://127.0.0.1:4300' })
    expect(result.gateway.nativeUrl).toBe('http://127.0.0.1:4300')
    expect(result.listeners[1]).toEqual({ setting: 'native.port', host: '127.0.0.1', port: 4300 })
  })

  it('serve: --native-url, else the URL recorded by the last up, else a port of the stack file', () => {
    const recorded = recordedAt('4200', 'http://10.9.9.9:4200')
    expect(plan({ recorded, flags: { nativeUrl: 'http://x:1' } }).gateway.nativeUrl).toBe('http://x:1')
    expect(plan({ recorded }).gateway.nativeUrl).toBe('http://10.9.9.9:4200')
    const numbered = config((c) => {
      c.native.port = 4100
    })
    expect(plan({ config: numbered }).gateway.nativeUrl).toBe('http://127.0.0.1:4100')
    expect(plan().gateway.nativeUrl).toBeUndefined()
  })

  it('writes an IPv6 native host in brackets', () => {
    const result = plan({
      config: config((c) => {
        c.native.host = '::1'
      }),
      nativePort: 4300,
    })
    expect(result.native.url).toBe('http://[::1]:4300')
    expect(result.healthTargets[1]?.url).toBe('http://[::1]:4300/global/health')
  })

  it('names the password files, a flag as the flag', () => {
    const result = plan()
    expect(result.native.passwordFile).toEqual({
      path: '/s/state/native-password',
      shownAs: 'state/native-password',
    })
    expect(result.gateway.nativePasswordFile).toEqual(result.native.passwordFile)
    expect(result.moderator.passwordFile).toEqual({
      path: '/s/state/moderator-password',
      shownAs: 'state/moderator-password',
    })
    const flagged = plan({ flags: { nativePasswordFile: '/p/pw', nativeUsername: 'alice' } })
    expect(flagged.gateway.nativePasswordFile).toEqual({ path: '/p/pw', shownAs: '--native-password-file' })
    expect(flagged.gateway.nativeUsername).toBe('alice')
    expect(flagged.native.username).toBe('opencode')
  })
})

describe('resolveStackPlan: the moderator and the health targets', () => {
  it('probes gateway, assistant and moderator, the runtimes with Basic auth', () => {
    const result = plan({ recorded: recordedAt('4200') })
    expect(result.moderator).toMatchObject({
      host: '127.0.0.1',
      port: 4097,
      username: 'moderator',
    })
    expect(result.healthTargets).toEqual([
      {
        name: 'gateway',
        host: '127.0.0.1',
        port: 8787,
        url: 'http://127.0.0.1:8787/health',
        healthyField: 'ok',
        setting: 'gateway.port',
      },
      {
        name: 'assistant runtime',
        host: '127.0.0.1',
        port: 4200,
        url: 'http://127.0.0.1:4200/global/health',
        basicAuth: { username: 'opencode', passwordFile: result.native.passwordFile },
        healthyField: 'healthy',
        setting: 'native.port',
      },
      {
        name: 'moderator runtime',
        host: '127.0.0.1',
        port: 4097,
        url: 'http://127.0.0.1:4097/global/health',
        basicAuth: { username: 'moderator', passwordFile: result.moderator.passwordFile },
        healthyField: 'healthy',
        setting: 'moderator.port',
      },
    ])
  })

  it('lets the port-clash check see a recorded "auto" port', () => {
    const result = plan({ recorded: recordedAt('8787') })
    expect(portClash(result.listeners)?.path).toEqual(['native', 'port'])
  })
})

describe('knownNativePort and isLoopback', () => {
  it('knows a configured or validly recorded port only', () => {
    expect(knownNativePort({ native: { host: 'h', port: 5, username: 'u' } }, new Map())).toBe(5)
    expect(knownNativePort(config(), recordedAt('65535'))).toBe(65535)
    expect(knownNativePort(config(), recordedAt('1.5'))).toBeUndefined()
  })

  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.1', false],
  ])('%s is loopback: %s', (host, expected) => {
    expect(isLoopback(host)).toBe(expected)
  })
})
