import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { createUpstreamClient, type UpstreamClient, UpstreamError } from '../../src/index.ts'
import { createFakeRuntime, type FakeRuntime, type FakeRuntimeOptions } from '../../src/testing/index.ts'

/** One fake runtime and msw server for a test file, with `onUnhandledRequest: 'error'`. */
export function useFakeRuntime(options: FakeRuntimeOptions = {}): {
  fake: FakeRuntime
  server: ReturnType<typeof setupServer>
  client: (extra?: Partial<Parameters<typeof createUpstreamClient>[0]>) => UpstreamClient
} {
  const fake = createFakeRuntime(options)
  const server = setupServer(...fake.handlers)
  const clients: UpstreamClient[] = []
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
  afterEach(() => {
    for (const client of clients.splice(0)) client.close()
    server.resetHandlers()
  })
  afterAll(() => server.close())
  return {
    fake,
    server,
    client(extra = {}) {
      const client = createUpstreamClient({ ...fake.clientOptions, ...extra })
      clients.push(client)
      return client
    },
  }
}

/** Awaits a rejection and checks it is an UpstreamError that carries no trace of the credential. */
export async function upstreamFailure(
  promise: Promise<unknown>,
  secrets: readonly string[],
): Promise<UpstreamError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail')
    },
    (reason: unknown) => reason,
  )
  expect(UpstreamError.isInstance(error)).toBe(true)
  const upstream = error as UpstreamError
  const dump = [
    String(upstream),
    upstream.stack ?? '',
    JSON.stringify(upstream),
    JSON.stringify(Object.entries(upstream)),
    String(upstream.cause ?? ''),
    JSON.stringify(upstream.cause ?? null),
    upstream.body ?? '',
  ].join('\n')
  for (const secret of secrets) expect(dump).not.toContain(secret)
  return upstream
}

/** The Basic token of a username/password pair. */
export function basicToken(username: string, password: string): string {
  return Buffer.from(`${username}:${password}`).toString('base64')
}
