import { type HttpHandler, HttpResponse, http } from 'msw'
import type { FakeAsks } from './fake-asks.ts'
import type { FakeEventHub } from './fake-event-hub.ts'
import { listMessagesPage, listSessionsPage } from './fake-queries.ts'
import {
  createSessionRecord,
  deleteSessionRecord,
  type FakeContext,
  forkSessionRecord,
  touchSession,
} from './fake-sessions.ts'
import { FAKE_RUNTIME_VERSION, isPlainObject, mergeJson } from './fake-state.ts'
import type { FakeTurns } from './fake-turns.ts'

/** One request the fake received (credential and body left out). */
export interface FakeRequestRecord {
  readonly method: string
  readonly path: string
  readonly query: Readonly<Record<string, string>>
  /** Whether it carried the right Basic credential. */
  readonly authorized: boolean
}

/** Everything the handlers work on. */
export interface FakeHandlerDeps {
  readonly ctx: FakeContext
  readonly hub: FakeEventHub
  readonly turns: FakeTurns
  readonly asks: FakeAsks
  readonly baseUrl: string
  readonly authorization: string
  readonly requests: FakeRequestRecord[]
  /** Whether `GET /event` answers; when false it answers 503 (for polling-fallback tests). */
  readonly eventsAvailable: () => boolean
}

const json = (body: unknown, status = 200): Response => HttpResponse.json(body as never, { status })
const notFound = (what: string): Response =>
  json({ name: 'NotFoundError', data: { message: `${what} not found` } }, 404)
const badRequest = (): Response => json({ _tag: 'BadRequest' }, 400)

type Resolver = (request: Request, params: Record<string, string>, url: URL) => Response | Promise<Response>

/**
 * The msw handlers of the fake runtime. Every route enforces Basic auth (401 with the runtime's
 * `www-authenticate`), and every directory-scoped route REQUIRES `?directory=` equal to the
 * fake's directory (400 otherwise). The real runtime would open any directory; the fake is
 * strict on purpose, so a client that fails to pin the directory fails its tests.
 */
export function createFakeHandlers(deps: FakeHandlerDeps): HttpHandler[] {
  const { ctx, turns, asks } = deps
  const { state } = ctx

  const route = (
    method: 'get' | 'post' | 'patch' | 'put' | 'delete',
    path: string,
    scoped: boolean,
    resolve: Resolver,
  ) =>
    http[method](`${deps.baseUrl}${path}`, async ({ request, params }) => {
      const url = new URL(request.url)
      const authorized = request.headers.get('authorization') === deps.authorization
      deps.requests.push({
        method: request.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        authorized,
      })
      if (!authorized)
        return new HttpResponse('Unauthorized', {
          status: 401,
          headers: { 'www-authenticate': 'Basic realm="Secure Area"' },
        })
      if (scoped && url.searchParams.get('directory') !== ctx.directory) return badRequest()
      return resolve(request, params as Record<string, string>, url)
    })

  const body = async (request: Request): Promise<Record<string, unknown> | undefined> => {
    try {
      const value: unknown = await request.json()
      return isPlainObject(value) ? value : undefined
    } catch {
      return undefined
    }
  }
  const session = (id: string | undefined) => (id ? state.sessions.get(id) : undefined)

  return [
    route('get', '/global/health', false, () => json({ healthy: true, version: FAKE_RUNTIME_VERSION })),
    route('get', '/global/config', false, () => json(state.globalConfig)),
    route('patch', '/global/config', false, async (request) => {
      const patch = await body(request)
      if (!patch) return badRequest()
      state.globalConfig = mergeJson(state.globalConfig, patch)
      return json(state.globalConfig)
    }),
    route('get', '/config', true, () => json(mergeJson(state.globalConfig, state.projectConfig))),
    route('put', '/auth/:providerID', false, async (request, params) => {
      const auth = await body(request)
      if (!auth || !['api', 'oauth', 'wellknown'].includes(String(auth.type))) return badRequest()
      state.auth.set(params.providerID ?? '', auth)
      return json(true)
    }),
    route('delete', '/auth/:providerID', false, (_request, params) => {
      state.auth.delete(params.providerID ?? '')
      return json(true)
    }),
    route('get', '/provider', true, () => json(state.providers)),
    route('get', '/config/providers', true, () =>
      json({
        providers: state.providers.all.filter((p) => state.providers.connected.includes(p.id)),
        default: Object.fromEntries(
          Object.entries(state.providers.default).filter(([id]) => state.providers.connected.includes(id)),
        ),
      }),
    ),
    route('get', '/agent', true, () => json(state.agents)),

    route('get', '/event', true, (request) => {
      if (!deps.eventsAvailable()) return new HttpResponse('Service Unavailable', { status: 503 })
      return new HttpResponse(deps.hub.open(request.signal), {
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
      })
    }),

    route('get', '/session/status', true, () => json(Object.fromEntries(state.status))),
    route('get', '/session', true, (_request, _params, url) =>
      json(listSessionsPage(state, url.searchParams)),
    ),
    route('post', '/session', true, async (request) => {
      const input = (await body(request)) ?? {}
      if (input.metadata !== undefined && !isPlainObject(input.metadata)) return badRequest()
      if (input.parentID !== undefined && !session(String(input.parentID))) return notFound('Session')
      return json(
        createSessionRecord(ctx, {
          ...(typeof input.title === 'string' ? { title: input.title } : {}),
          ...(typeof input.agent === 'string' ? { agent: input.agent } : {}),
          ...(isPlainObject(input.metadata) ? { metadata: input.metadata } : {}),
          ...(typeof input.parentID === 'string' ? { parentID: input.parentID } : {}),
        }),
      )
    }),
    route('get', '/session/:sessionID/children', true, (_request, { sessionID }) =>
      session(sessionID)
        ? json([...state.sessions.values()].filter((s) => s.parentID === sessionID))
        : notFound('Session'),
    ),
    route('get', '/session/:sessionID', true, (_request, { sessionID }) => {
      const found = session(sessionID)
      return found ? json(found) : notFound('Session')
    }),
    route('patch', '/session/:sessionID', true, async (request, { sessionID }) => {
      const patch = await body(request)
      if (!patch || (patch.metadata !== undefined && !isPlainObject(patch.metadata))) return badRequest()
      if (!session(sessionID)) return notFound('Session')
      const change: Record<string, unknown> = {}
      if (typeof patch.title === 'string') change.title = patch.title
      // Replaced, not merged, like the runtime.
      if (isPlainObject(patch.metadata)) change.metadata = patch.metadata
      return json(touchSession(ctx, sessionID ?? '', change))
    }),
    route('delete', '/session/:sessionID', true, (_request, { sessionID }) =>
      deleteSessionRecord(ctx, sessionID ?? '') ? json(true) : notFound('Session'),
    ),
    route('post', '/session/:sessionID/fork', true, async (request, { sessionID }) => {
      const input = (await body(request)) ?? {}
      const fork = forkSessionRecord(
        ctx,
        sessionID ?? '',
        typeof input.messageID === 'string' ? input.messageID : undefined,
      )
      return fork ? json(fork) : notFound('Session')
    }),
    route('post', '/session/:sessionID/abort', true, (_request, { sessionID }) => {
      turns.abort(sessionID ?? '')
      return json(true)
    }),
    route('get', '/session/:sessionID/message', true, (_request, { sessionID }, url) => {
      if (!session(sessionID)) return notFound('Session')
      const page = listMessagesPage(state, sessionID ?? '', url.searchParams)
      if (!page) return badRequest()
      return HttpResponse.json(page.items as never, {
        headers: page.cursor ? { 'x-next-cursor': page.cursor } : {},
      })
    }),
    route('get', '/session/:sessionID/message/:messageID', true, (_request, { sessionID, messageID }) => {
      const found = state.messages.get(sessionID ?? '')?.find((m) => m.info.id === messageID)
      return found ? json(found) : notFound('Message')
    }),
    route('post', '/session/:sessionID/prompt_async', true, async (request, { sessionID }) => {
      const input = await body(request)
      if (!input || !Array.isArray(input.parts) || !input.parts.every(isPlainObject)) return badRequest()
      if (input.messageID !== undefined && !String(input.messageID).startsWith('msg')) return badRequest()
      if (!session(sessionID)) return notFound('Session')
      turns.prompt(sessionID ?? '', {
        parts: input.parts,
        ...(typeof input.messageID === 'string' ? { messageID: input.messageID } : {}),
        ...(typeof input.agent === 'string' ? { agent: input.agent } : {}),
        ...(isPlainObject(input.model)
          ? { model: input.model as { providerID: string; modelID: string } }
          : {}),
      })
      return new HttpResponse(null, { status: 204 })
    }),
    route('get', '/session/:sessionID/todo', true, (_request, { sessionID }) =>
      session(sessionID) ? json(state.todos.get(sessionID ?? '') ?? []) : notFound('Session'),
    ),
    // Like opencode 1.18.33: the user message's `summary.diffs`, `[]` without a message id.
    route('get', '/session/:sessionID/diff', true, (_request, { sessionID }, url) => {
      const messageID = url.searchParams.get('messageID')
      const user = state.messages.get(sessionID ?? '')?.find((m) => m.info.id === messageID)
      const summary =
        user?.info.role === 'user' ? (user.info as { summary?: { diffs?: unknown } }).summary : undefined
      return json(summary?.diffs ?? [])
    }),

    route('get', '/permission', true, () => json([...state.permissions.values()])),
    route('post', '/permission/:requestID/reply', true, async (request, { requestID }) => {
      const input = await body(request)
      const reply = input?.reply
      if (reply !== 'once' && reply !== 'always' && reply !== 'reject') return badRequest()
      const message = typeof input?.message === 'string' ? input.message : undefined
      return asks.replyPermission(requestID ?? '', reply, message)
        ? json(true)
        : json({ name: 'PermissionNotFoundError', data: { message: 'Permission not found' } }, 404)
    }),
    route('get', '/question', true, () => json([...state.questions.values()])),
    route('post', '/question/:requestID/reply', true, async (request, { requestID }) => {
      const answers = (await body(request))?.answers
      if (
        !Array.isArray(answers) ||
        !answers.every((a) => Array.isArray(a) && a.every((l) => typeof l === 'string'))
      )
        return badRequest()
      return asks.replyQuestion(requestID ?? '', answers as string[][])
        ? json(true)
        : json({ name: 'QuestionNotFoundError', data: { message: 'Question not found' } }, 404)
    }),
    route('post', '/question/:requestID/reject', true, (_request, { requestID }) =>
      asks.rejectQuestion(requestID ?? '')
        ? json(true)
        : json({ name: 'QuestionNotFoundError', data: { message: 'Question not found' } }, 404),
    ),
  ]
}
