import { type BufferedAnswer, canBuffer } from './node-fetch.ts'
import type { ResolvedOptions } from './options.ts'
import { createRedactor, type Redactor } from './redact.ts'
import { createRequestGate } from './request-gate.ts'

/** Sends one request to the runtime with the credential and the pinned directory applied. */
export type Send = (request: Request) => Promise<Response>

/** The one place that touches credentials and the workspace directory of outgoing requests. */
export interface Transport {
  /** Sends a call: at most `maxConcurrentRequests` at once, the rest wait their turn. */
  readonly send: Send
  /** Opens a long-lived stream (the event stream), outside that bound: it holds its connection. */
  readonly openStream: Send
  /**
   * A GET of `path` (with `query`) whose answer is read whole, within the same bound as `send`:
   * through the fetch's own buffered read when it has one (`BufferingFetch`), else through it.
   */
  readonly get: (path: string, query: Readonly<Query>, signal: AbortSignal) => Promise<BufferedAnswer>
  readonly redact: Redactor
}

/** Query parameters of a GET; `undefined` ones are left out. */
export type Query = Record<string, string | number | boolean | undefined>

/** A query parameter by which the runtime would pick another directory or workspace. */
const namesPlace = (name: string): boolean =>
  name === 'directory' || name === 'workspace' || name.startsWith('location[')

/**
 * Builds the transport of one client. The Basic header is computed once here and only ever
 * written into outgoing request headers, never into a log, a message or an error.
 *
 * Every request is pinned to the configured directory: any `directory`/`workspace` query or
 * `x-opencode-directory`/`x-opencode-workspace` header already on it is dropped and replaced by
 * the configured one (query AND header, so it holds for GET and POST routes alike). The runtime
 * opens whatever directory a request names, so this is the gateway's workspace boundary.
 */
export function createTransport(options: ResolvedOptions): Transport {
  const token = Buffer.from(`${options.username}:${options.password}`, 'utf8').toString('base64')
  const authorization = `Basic ${token}`
  const redact = createRedactor(options.username, options.password, token)
  const pin = (request: Request): Request => {
    const url = new URL(request.url)
    for (const name of [...url.searchParams.keys()]) if (namesPlace(name)) url.searchParams.delete(name)
    url.searchParams.set('directory', options.directory)
    const pinned = new Request(url, request)
    pinned.headers.delete('x-opencode-workspace')
    pinned.headers.set('x-opencode-directory', encodeURIComponent(options.directory))
    pinned.headers.set('authorization', authorization)
    return pinned
  }
  const gate = createRequestGate(options.maxConcurrentRequests, options.fairnessKey)
  const send: Send = (request) => gate.run(request.signal, () => options.fetch(pin(request)))
  const openStream: Send = (request) => options.fetch(pin(request))
  const directoryHeader = encodeURIComponent(options.directory)
  const fetch = options.fetch
  const get = (path: string, query: Readonly<Query>, signal: AbortSignal): Promise<BufferedAnswer> => {
    const url = new URL(options.baseUrl + path)
    for (const [name, value] of Object.entries(query))
      if (value !== undefined && !namesPlace(name)) url.searchParams.set(name, String(value))
    // Pinned as `pin` does for the SDK's requests: the query and the header name the directory.
    url.searchParams.set('directory', options.directory)
    const headers = { accept: 'application/json', authorization, 'x-opencode-directory': directoryHeader }
    if (canBuffer(fetch)) return gate.runWhole(signal, () => fetch.bufferedGet(url, headers, signal))
    return gate.runWhole(signal, async () => {
      const response = await fetch(new Request(url, { headers, signal }))
      const body = Buffer.from(await response.arrayBuffer())
      return { status: response.status, headers: Object.fromEntries(response.headers), body }
    })
  }
  return { send, openStream, get, redact }
}
