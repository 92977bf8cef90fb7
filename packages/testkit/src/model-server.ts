import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { classifyChatRequest, messageText, scriptMarker } from './chat-request.ts'
import { errorBody } from './openai-format.ts'
import type { ChatCompletionBody, ChatRequestView, ScriptEntry, ScriptStep } from './script-steps.ts'
import { json, writeAnswer } from './write-answer.ts'

/** Options of {@link startModelServer}. */
export interface ModelServerOptions {
  /** Interface to bind; default `127.0.0.1`. */
  host?: string
  /** Port; default 0 (chosen by the OS). */
  port?: number
  /** Model id reported in answers and by `GET /v1/models`; default `fake-1`. */
  model?: string
  /** Answer to title-generation requests; default `Fake title`. */
  title?: string
  /** Answer when no script matches (no marker, unknown script, or script exhausted); default `OK`. */
  defaultText?: string
  /**
   * Requests for this model id are moderation requests (the gateway's moderator runtime asks
   * them): answered by the handler given to `onModeration`, never by a script. Default `fake-mod`.
   */
  moderationModel?: string
}

/** What a moderation handler sees: the text the moderator was asked about (the whole prompt). */
export interface ModerationRequestView {
  /** The user message text (task, nonce markers and the input between them). */
  prompt: string
  /** The input between the nonce markers, when the prompt has them. */
  input: string | undefined
  body: ChatCompletionBody
}

/** One request the server received, in arrival order. */
export interface RecordedRequest {
  method: string
  /** Path without query string, e.g. `/v1/chat/completions`. */
  path: string
  /** Lower-cased header names. */
  headers: Record<string, string | string[] | undefined>
  /** Parsed JSON body, or undefined (GET, empty or invalid body). */
  body: ChatCompletionBody | undefined
  /** `chat` (scripted or default answer), `title`, `moderation`, `models` or `other`. */
  kind: 'chat' | 'title' | 'moderation' | 'models' | 'other'
  /** The runtime session id (`x-session-affinity` header), when sent. */
  sessionId: string | undefined
  /** Script id from the marker, if any. */
  scriptId: string | undefined
  /** Step index answered (scripted requests only). */
  step: number | undefined
  /** The step that answered it; undefined for default/title answers. */
  answer: ScriptStep | undefined
  /** `pending` while answering, then `completed`, or `aborted` when the client went away first. */
  outcome: 'pending' | 'completed' | 'aborted'
  receivedAt: number
}

/** A running scripted OpenAI-compatible model server. See {@link startModelServer}. */
export interface ModelServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** `http://127.0.0.1:<port>/v1`: the provider `baseURL`. */
  readonly baseURL: string
  /** Model id (`fake-1` unless configured). */
  readonly model: string
  /** Every request received, oldest first (live array). */
  readonly requests: readonly RecordedRequest[]
  /**
   * Registers a script and returns its marker (`[[script:<id>]]`). Put the marker in a prompt's
   * text: each model request of that turn gets the next step. The same marker can be used by many
   * sessions at once; each follows the steps independently. Re-registering an id replaces it.
   */
  script(steps: readonly ScriptEntry[], id?: string): string
  /**
   * Sets how moderation requests (model `moderationModel`) are answered; default the verdict
   * `{"verdict":"allow"}`. The handler returns a step: text (the verdict), a delay, an error.
   */
  onModeration(handler: (request: ModerationRequestView) => ScriptStep): void
  /** Recorded chat requests (scripted and default, not title) of one script, by id or marker. */
  requestsFor(idOrMarker: string): RecordedRequest[]
  /**
   * Resolves with the first recorded request that matches, now or later (re-checked when a request
   * arrives and when its `outcome` changes); rejects after `timeoutMs` (default 10 s).
   */
  waitForRequest(
    predicate: (request: RecordedRequest) => boolean,
    timeoutMs?: number,
  ): Promise<RecordedRequest>
  /** Stops listening, ends open streams, resolves when closed. */
  close(): Promise<void>
}

/**
 * Starts the scripted model server on a loopback port chosen by the OS.
 *
 * @example
 * const model = await startModelServer()
 * const marker = model.script([{ toolCall: { name: 'bash', input: { command: 'ls', description: 'list' } } }, { text: 'done' }])
 * // prompt the runtime with `do it ${marker}`
 * await model.close()
 */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const model = options.model ?? 'fake-1'
  const title = options.title ?? 'Fake title'
  const defaultText = options.defaultText ?? 'OK'
  const moderationModel = options.moderationModel ?? 'fake-mod'
  let moderate: (request: ModerationRequestView) => ScriptStep = () => ({ text: '{"verdict":"allow"}' })
  const scripts = new Map<string, readonly ScriptEntry[]>()
  const requests: RecordedRequest[] = []
  const waiters = new Set<(request: RecordedRequest) => void>()
  const inflight = new Set<AbortController>()

  // Waiters are told about each new request and each later outcome change.
  const notify = (request: RecordedRequest): void => {
    for (const waiter of [...waiters]) waiter(request)
  }
  const record = (request: RecordedRequest): void => {
    requests.push(request)
    notify(request)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // 400 + invalid_request_error: the runtime fails the turn at once instead of retrying ~70 s.
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify(errorBody(`testkit model server: ${String(error)}`, 'invalid_request_error', null)),
      )
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    const raw = await readBody(req)
    let body: ChatCompletionBody | undefined
    try {
      body = raw.length > 0 ? (JSON.parse(raw) as ChatCompletionBody) : undefined
    } catch {
      body = undefined
    }
    const entry: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      headers: { ...req.headers },
      body,
      kind: 'other',
      sessionId: headerValue(req.headers['x-session-affinity']),
      scriptId: undefined,
      step: undefined,
      answer: undefined,
      outcome: 'pending',
      receivedAt: Date.now(),
    }
    if (req.method === 'GET' && /^(\/v1)?\/models$/.test(path)) {
      entry.kind = 'models'
      entry.outcome = 'completed'
      record(entry)
      json(res, 200, {
        object: 'list',
        data: [{ id: model, object: 'model', created: 0, owned_by: 'testkit' }],
      })
      return
    }
    if (req.method !== 'POST' || !/^(\/v1)?\/chat\/completions$/.test(path) || body === undefined) {
      entry.outcome = 'completed'
      record(entry)
      json(res, 404, errorBody(`testkit model server: no route ${req.method} ${path}`, 'not_found', null))
      return
    }
    const classified = classifyChatRequest(body)
    let step: ScriptStep
    if (classified.kind === 'title') {
      entry.kind = 'title'
      step = { text: title }
    } else if (body.model === moderationModel) {
      entry.kind = 'moderation'
      const users = (Array.isArray(body.messages) ? body.messages : []).filter((m) => m.role === 'user')
      const prompt = users.length > 0 ? messageText(users[users.length - 1] as (typeof users)[number]) : ''
      const between = /<untrusted-input ([0-9a-f]+)>\n([\s\S]*)\n<\/untrusted-input \1>/.exec(prompt)
      try {
        step = moderate({ prompt, input: between?.[2], body })
      } catch (error) {
        step = {
          error: {
            status: 400,
            type: 'invalid_request_error',
            message: `moderation handler threw: ${String(error)}`,
          },
        }
      }
      entry.answer = step
    } else {
      entry.kind = 'chat'
      step = { text: defaultText }
      if (classified.kind === 'scripted') {
        entry.scriptId = classified.scriptId
        entry.step = classified.step
        const candidate = scripts.get(classified.scriptId)?.[classified.step]
        if (candidate !== undefined) {
          step = resolveEntry(candidate, { body, step: classified.step, toolResults: classified.toolResults })
          entry.answer = step
        }
      }
    }
    record(entry)
    const controller = new AbortController()
    inflight.add(controller)
    res.on('close', () => {
      if (!res.writableFinished) controller.abort()
    })
    try {
      await writeAnswer(res, step, { model, stream: body.stream === true, signal: controller.signal })
      entry.outcome = controller.signal.aborted ? 'aborted' : 'completed'
    } catch (error) {
      if (!controller.signal.aborted) throw error
      entry.outcome = 'aborted'
    } finally {
      inflight.delete(controller)
      notify(entry)
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
  })
  const { address, port } = server.address() as AddressInfo
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`

  return {
    url,
    baseURL: `${url}/v1`,
    model,
    requests,
    script(steps, id = randomUUID().slice(0, 8)) {
      if (!/^[A-Za-z0-9_.-]+$/.test(id)) throw new TypeError(`script id must match [A-Za-z0-9_.-]+: ${id}`)
      if (steps.length === 0) throw new RangeError('a script needs at least one step')
      scripts.set(id, [...steps])
      return scriptMarker(id)
    },
    onModeration(handler) {
      moderate = handler
    },
    requestsFor(idOrMarker) {
      const id = idOrMarker.replace(/^\[\[script:(.*)\]\]$/, '$1')
      return requests.filter((r) => r.kind === 'chat' && r.scriptId === id)
    },
    waitForRequest(predicate, timeoutMs = 10_000) {
      const found = requests.find(predicate)
      if (found) return Promise.resolve(found)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter)
          reject(new Error(`testkit model server: no matching request within ${timeoutMs} ms`))
        }, timeoutMs)
        const waiter = (request: RecordedRequest): void => {
          if (!predicate(request)) return
          clearTimeout(timer)
          waiters.delete(waiter)
          resolve(request)
        }
        waiters.add(waiter)
      })
    },
    close() {
      for (const controller of inflight) controller.abort()
      return new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    },
  }
}

/**
 * A step function that throws becomes a 400 `invalid_request_error` answer carrying the message,
 * so the turn fails at once and the test sees why (a 500 would be retried for ~70 s).
 */
function resolveEntry(entry: ScriptEntry, view: ChatRequestView): ScriptStep {
  if (typeof entry !== 'function') return entry
  try {
    return entry(view)
  } catch (error) {
    return {
      error: {
        status: 400,
        type: 'invalid_request_error',
        message: `testkit script step threw: ${String(error)}`,
      },
    }
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}
