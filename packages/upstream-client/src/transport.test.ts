import { describe, expect, it } from 'vitest'
import { resolveOptions } from './options.ts'
import { createTransport } from './transport.ts'

function capture(directory = '/work/space ü') {
  const seen: Request[] = []
  const transport = createTransport(
    resolveOptions({
      baseUrl: 'http://runtime.test',
      username: 'gw',
      password: 'pw',
      directory,
      fetch: async (input) => {
        seen.push(input as Request)
        return new Response('true')
      },
    }),
  )
  return { seen, transport }
}

describe('createTransport', () => {
  it('pins the directory in the query and the header and adds the Basic header', async () => {
    const { seen, transport } = capture()
    await transport.send(new Request('http://runtime.test/session'))
    const request = seen[0]
    expect(new URL(request?.url ?? '').searchParams.getAll('directory')).toEqual(['/work/space ü'])
    expect(request?.headers.get('x-opencode-directory')).toBe(encodeURIComponent('/work/space ü'))
    expect(request?.headers.get('authorization')).toBe(`Basic ${Buffer.from('gw:pw').toString('base64')}`)
  })

  it('replaces any directory or workspace a request already names, for GET and POST alike', async () => {
    const { seen, transport } = capture('/work')
    for (const method of ['GET', 'POST']) {
      await transport.send(
        new Request('http://runtime.test/session?directory=/etc&workspace=wrk_1&location[directory]=/root', {
          method,
          headers: { 'x-opencode-directory': '/etc', 'x-opencode-workspace': 'wrk_1' },
          ...(method === 'POST' ? { body: '{"title":"t"}' } : {}),
        }),
      )
    }
    for (const request of seen) {
      const url = new URL(request.url)
      expect([...url.searchParams.keys()]).toEqual(['directory'])
      expect(url.searchParams.get('directory')).toBe('/work')
      expect(request.headers.get('x-opencode-directory')).toBe('%2Fwork')
      expect(request.headers.has('x-opencode-workspace')).toBe(false)
    }
    expect(await seen[1]?.text()).toBe('{"title":"t"}')
  })

  it('keeps other query parameters', async () => {
    const { seen, transport } = capture('/work')
    await transport.send(new Request('http://runtime.test/session?limit=5&roots=true'))
    const url = new URL(seen[0]?.url ?? '')
    expect(url.searchParams.get('limit')).toBe('5')
    expect(url.searchParams.get('roots')).toBe('true')
  })
  it('get: a GET pinned as send pins, through the fetch, or through its bufferedGet when it has one', async () => {
    const { seen, transport } = capture('/work')
    const answer = await transport.get(
      '/session/ses_1',
      { limit: 5, before: undefined, directory: '/etc', workspace: 'wrk_1', 'location[directory]': '/etc' },
      new AbortController().signal,
    )
    expect(answer.status).toBe(200)
    expect(answer.body.toString()).toBe('true')
    const url = new URL(seen[0]?.url ?? '')
    expect(url.pathname).toBe('/session/ses_1')
    expect([...url.searchParams.entries()]).toEqual([
      ['limit', '5'],
      ['directory', '/work'],
    ])
    expect(seen[0]?.headers.get('x-opencode-directory')).toBe('%2Fwork')
    expect(seen[0]?.headers.get('authorization')).toBe(`Basic ${Buffer.from('gw:pw').toString('base64')}`)

    const buffered: { url: URL; headers: Readonly<Record<string, string>> }[] = []
    const fetch = Object.assign(
      async (): Promise<Response> => {
        throw new Error('fetch must not be used for a buffered read')
      },
      {
        bufferedGet: async (url: URL, headers: Readonly<Record<string, string>>) => {
          buffered.push({ url, headers })
          return { status: 200, headers: {}, body: Buffer.from('[]') }
        },
      },
    )
    const viaBuffer = createTransport(
      resolveOptions({
        baseUrl: 'http://runtime.test',
        username: 'gw',
        password: 'pw',
        directory: '/w ü',
        fetch,
      }),
    )
    expect((await viaBuffer.get('/session/status', {}, new AbortController().signal)).body.toString()).toBe(
      '[]',
    )
    expect(buffered[0]?.url.searchParams.getAll('directory')).toEqual(['/w ü'])
    expect(buffered[0]?.headers['x-opencode-directory']).toBe(encodeURIComponent('/w ü'))
    expect(buffered[0]?.headers.authorization).toBe(`Basic ${Buffer.from('gw:pw').toString('base64')}`)
  })
})
