import { Buffer } from 'node:buffer'
import { PresetError } from './errors.js'
import { checkBaseUrl, describeUrl, isObjectName } from './validate.js'

// One bounded `GET <baseURL>/models` (the OpenAI list-models route most compatible servers
// serve), made from where the runtime runs (the CLI runs beside it: on the host for `sallyport
// up`, inside the container through `docker exec`). Only model ids come back; the raw answer is
// never returned or printed, and a key is only ever sent as the bearer credential.

/** What listing a server's models found. */
export type ModelListing =
  /** The server listed these model ids (sorted, de-duplicated, at most MAX_MODELS). */
  | { readonly supported: true; readonly models: readonly string[]; readonly truncated: boolean }
  /** The server does not list its models (or not this way): use the documented model id. */
  | { readonly supported: false; readonly reason: string }

export interface ListModelsOptions {
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer <key>`; never logged. */
  readonly key?: string
  /** Default 10 000 ms for the whole request. */
  readonly timeoutMs?: number
  /** The largest answer read, in bytes (default 1 MiB); a longer one is not read further. */
  readonly maxBytes?: number
  /** For tests. */
  readonly fetch?: typeof fetch
}

const MAX_MODELS = 500
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/

/** Lists the model ids a server reports, or says that it does not. */
export async function listModels(options: ListModelsOptions): Promise<ModelListing> {
  const baseUrl = checkBaseUrl(options.baseUrl)
  const url = `${baseUrl}/models`
  const timeoutMs = options.timeoutMs ?? 10_000
  const maxBytes = options.maxBytes ?? 1024 * 1024
  const doFetch = options.fetch ?? fetch
  const where = describeUrl(url)
  let response: Response
  try {
    response = await doFetch(url, {
      headers: {
        accept: 'application/json',
        ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
      },
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (cause) {
    const timedOut = (cause as Error).name === 'TimeoutError'
    throw new PresetError(
      'ERR_PRESET_RUNTIME',
      timedOut
        ? `${where} did not answer within ${timeoutMs} ms`
        : `${where} could not be reached from here (${(cause as Error).name}): check the base URL from where the runtime runs`,
      { cause },
    )
  }
  if (response.status === 401 || response.status === 403) {
    discard(response)
    throw new PresetError(
      'ERR_PRESET_RUNTIME',
      `${where} refused the request (HTTP ${response.status}): pass its key with --key-stdin`,
    )
  }
  if (!response.ok) {
    discard(response)
    return {
      supported: false,
      reason: `${where} answered HTTP ${response.status}: it does not list its models this way`,
    }
  }
  let text: string | undefined
  try {
    text = await readBounded(response, maxBytes)
  } catch (cause) {
    throw new PresetError(
      'ERR_PRESET_RUNTIME',
      (cause as Error).name === 'TimeoutError'
        ? `${where} did not finish its answer within ${timeoutMs} ms`
        : `${where} broke off its answer (${(cause as Error).name})`,
      { cause },
    )
  }
  if (text === undefined) return { supported: false, reason: `${where} answered more than ${maxBytes} bytes` }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return { supported: false, reason: `${where} did not answer JSON` }
  }
  const data = (body as { data?: unknown } | null)?.data
  if (!Array.isArray(data))
    return { supported: false, reason: `${where} did not answer an OpenAI model list` }
  const ids = new Set<string>()
  for (const entry of data) {
    const id = (entry as { id?: unknown } | null)?.id
    if (typeof id === 'string' && MODEL_ID.test(id) && !isObjectName(id)) ids.add(id)
  }
  const sorted = [...ids].sort()
  return { supported: true, models: sorted.slice(0, MAX_MODELS), truncated: sorted.length > MAX_MODELS }
}

/** The body as text, or undefined when it is longer than `maxBytes` (reading stops there). */
async function readBounded(response: Response, maxBytes: number): Promise<string | undefined> {
  const reader = response.body?.getReader()
  if (!reader) return ''
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > maxBytes) {
      // Not awaited: a server that keeps sending must not hold the command.
      reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Drops an answer's body unread (not awaited: a server that keeps sending must not hold the command). */
function discard(response: Response): void {
  response.body?.cancel().catch(() => {})
}
