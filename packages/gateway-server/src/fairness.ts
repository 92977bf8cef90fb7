import { AsyncLocalStorage } from 'node:async_hooks'
import { type BufferedGet, type BufferingFetch, createNodeFetch } from '@sallyport/upstream-client'

// Whose MCP request the current async work serves: the credential's username (never a key),
// entered by the HTTP boundary around each request's handling.
const current = new AsyncLocalStorage<string>()

/** Runs `fn` on behalf of `credential` (its username): upstream requests it makes carry that key. */
export function withFairnessKey<T>(credential: string, fn: () => T): T {
  return current.run(credential, fn)
}

/**
 * The credential the current work serves, or undefined outside a request. Pass it as the upstream
 * client's `fairnessKey`, so waiting runtime requests take turns across credentials.
 */
export function fairnessKey(): string | undefined {
  return current.getStore()
}

// What the current call has read from the runtime (bytes of the answers' declared lengths),
// entered by the tool and resource wrappers around each call (`mcp/define-tool.ts`).
const meters = new AsyncLocalStorage<ReadMeter>()

/** The bytes of the runtime's answers read on behalf of one call. */
export interface ReadMeter {
  bytes: number
}

/** Runs `fn` with `meter` counting the runtime's answers it reads (see `meteredFetch`). */
export function withReadMeter<T>(meter: ReadMeter, fn: () => T): T {
  return meters.run(meter, fn)
}

/** Runs one call's `fn` metered, then hands what it read to `charge` (bytes), also when it fails. */
export async function meteredCall<T>(charge: (bytes: number) => void, fn: () => Promise<T>): Promise<T> {
  const meter: ReadMeter = { bytes: 0 }
  try {
    return await withReadMeter(meter, fn)
  } finally {
    charge(meter.bytes)
  }
}

/**
 * The connections to the runtime of every client using {@link meteredFetch}: `node:http`, not
 * Node's global fetch, whose client and WebAssembly parser would stay in memory for good (about
 * 10 MiB of the gateway's idle RSS). The request gate bounds what is in flight; idle connections
 * close after 4 s.
 */
const runtimeFetch = createNodeFetch()

/** {@link meteredFetch} as a plain fetch. */
async function fetchMetered(input: Request | string | URL, init?: RequestInit): Promise<Response> {
  // The runtime client hands over a Request of its own: its headers are set in place, not copied.
  const request = input instanceof Request && init === undefined ? input : new Request(input, init)
  request.headers.set('accept-encoding', 'identity')
  const response = await runtimeFetch(request)
  const meter = meters.getStore()
  if (!meter || !response.body || response.headers.get('content-type')?.startsWith('text/event-stream'))
    return response
  const length = Number(response.headers.get('content-length'))
  if (!response.headers.has('content-encoding') && Number.isFinite(length) && length > 0) {
    meter.bytes += length
    return response
  }
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        meter.bytes += chunk.byteLength
        controller.enqueue(chunk)
      },
    }),
  )
  return new Response(counted, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}

/** The runtime client's reads read whole (`BufferedGet`), counted as {@link meteredFetch} counts. */
const getMetered: BufferedGet = async (url, headers, signal) => {
  const answer = await runtimeFetch.bufferedGet(url, { ...headers, 'accept-encoding': 'identity' }, signal)
  const meter = meters.getStore()
  if (meter) meter.bytes += answer.body.byteLength
  return answer
}

/**
 * The runtime client's fetch. It asks for uncompressed answers (on loopback, compressing costs
 * the runtime and the gateway CPU for nothing, and hides the length), and adds the bytes of each
 * answer to the current call's meter, if any: its `Content-Length`, or, without one, the bytes of
 * its body as they are read. The event stream is not counted. Its `bufferedGet` (the client's
 * reads) counts the same way.
 */
export const meteredFetch: BufferingFetch = Object.assign(fetchMetered, { bufferedGet: getMetered })

/**
 * Requests the gateway lets be in flight to the runtime at once. The runtime serves them about one
 * at a time (10–15 ms each), so more in flight only queue inside it, where no turn-taking applies:
 * measured with one chat credential storming (150 connections) while another ran its workflow,
 * the other's p50/p90 were 1 080/4 440 ms with 32 in flight in arrival order, 891/1 546 ms with 8
 * taking turns by credential (quiet: about 260–350/415–660 ms).
 */
export const GATEWAY_UPSTREAM_CONCURRENCY = 8

/**
 * The upstream client options a gateway's runtime client should use: turns by credential, 8 in
 * flight, the bytes each call reads counted (`limits.readBytesPerOperation`).
 */
export const gatewayUpstreamOptions = Object.freeze({
  fairnessKey,
  maxConcurrentRequests: GATEWAY_UPSTREAM_CONCURRENCY,
  fetch: meteredFetch,
})
