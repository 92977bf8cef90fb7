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
})
