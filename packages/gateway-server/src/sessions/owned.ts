import type { HandleCodec, HandleKind } from '@sallyport/handles'
import { z } from 'zod'
import { GatewayError } from '../errors.js'
import type { Principal } from '../principal.js'
import type { RuntimePort, RuntimeSession } from '../runtime/port.js'

/** Key of the ownership record inside an upstream session's `metadata`. */
export const OWNER_KEY = 'sallyport'

export interface OwnershipSignerLike {
  sign(upstreamSessionId: string, identity: string): Promise<unknown>
  verify(upstreamSessionId: string, identity: string, record: unknown): Promise<boolean>
}

export interface JobRef {
  session: RuntimeSession
  messageId: string
  /** When the gateway started the run (ms); lets a just-started run read as running. */
  startedAt: number
}

export interface InteractionRef {
  session: RuntimeSession
  requestId: string
  kind: 'permission' | 'question'
}

/** The most asks one multi round-trip round may carry (each is one form, or one per question item). */
export const MAX_ROUND_ASKS = 16

/**
 * What a multi round-trip retry needs (MCP 2026-07-28 `requestState`), sealed as a
 * `request_state` handle: the call it belongs to (`b`, a digest of tool and arguments), the job
 * (`s`, `m`, `t`), the wait budget left (`w`, ms), the round (`n`) and the asks the forms were
 * for (`a`: a question with its number of items, or a permission request).
 */
export type RequestState = z.output<typeof HANDLE_PAYLOADS.request_state>

/**
 * Everything that turns a client's handle into an upstream object for one principal, and back.
 * Every open verifies the handle (AES-GCM, identity, kind, expiry) AND the session's HMAC
 * ownership record, so neither a forged handle nor a session this credential did not create
 * can be reached. A session that is gone or not owned is `not_found`, like a foreign handle.
 */
export interface OwnedSessions {
  sealSession(id: string): Promise<string>
  sealJob(sessionId: string, messageId: string, startedAt: number): Promise<string>
  sealInteraction(sessionId: string, requestId: string, kind: 'permission' | 'question'): Promise<string>
  sealMessage(sessionId: string, messageId: string): Promise<string>
  sealRequestState(state: RequestState): Promise<string>
  openSession(handle: string): Promise<RuntimeSession>
  /**
   * Decrypts a session handle to its upstream id WITHOUT the ownership check. Only for starting
   * reads early, in parallel with `loadOwned`; nothing read may be returned unless it succeeds.
   */
  sessionIdOf(handle: string): Promise<string>
  /** Loads a session and verifies its ownership record (not_found otherwise). */
  loadOwned(sessionId: string): Promise<RuntimeSession>
  /** Decrypts a job handle without the ownership check (see `sessionIdOf`). */
  jobOf(handle: string): Promise<{ sessionId: string; messageId: string; startedAt: number }>
  openJob(handle: string): Promise<JobRef>
  openInteraction(handle: string): Promise<InteractionRef>
  /** Decrypts an interaction handle without the ownership check (see `sessionIdOf`). */
  interactionOf(
    handle: string,
  ): Promise<{ sessionId: string; requestId: string; kind: 'permission' | 'question' }>
  /** Decrypts a request state without the ownership check: load the session with `loadOwned`. */
  openRequestState(handle: string): Promise<RequestState>
  /** Opens a message handle that must belong to `sessionId`. */
  openMessage(handle: string, sessionId: string): Promise<string>
  isOwned(session: RuntimeSession): Promise<boolean>
  ownershipMetadata(sessionId: string): Promise<Record<string, unknown>>
  /** The credential's identity these sessions are checked against (never logged or returned). */
  readonly identity: string
}

const notFound = (): GatewayError => new GatewayError('not_found', 'Not found.')

// What each kind of handle carries, sealed and opened only here. One-letter keys keep handles
// short enough to paste. A payload that opens (so the gateway sealed it) but does not match its
// kind's schema is `not_found`, like any handle that does not open.
const upstreamId = z.string().min(1)
const HANDLE_PAYLOADS = {
  session: z.object({ s: upstreamId }),
  message: z.object({ s: upstreamId, m: upstreamId }),
  // `t`: when the run started (ms); a handle without one reads as started long ago.
  job: z.object({ s: upstreamId, m: upstreamId, t: z.number().catch(0) }),
  // `k`: `p` for a permission request, `q` for a question.
  interaction: z.object({ s: upstreamId, r: upstreamId, k: z.enum(['p', 'q']) }),
  request_state: z.object({
    b: z.string().min(1).max(64),
    s: upstreamId,
    m: upstreamId,
    t: z.number(),
    w: z.number().int().min(0).max(30_000),
    n: z.number().int().min(1).max(64),
    a: z
      .array(
        z.discriminatedUnion('k', [
          z.object({ k: z.literal('q'), r: upstreamId, c: z.number().int().min(1).max(MAX_ROUND_ASKS) }),
          z.object({ k: z.literal('p'), r: upstreamId }),
        ]),
      )
      .min(1)
      .max(MAX_ROUND_ASKS),
  }),
}
/** The payload of each handle kind. */
type HandlePayloads = { [K in HandleKind]: z.output<(typeof HANDLE_PAYLOADS)[K]> }
const PAYLOAD_SCHEMAS: { readonly [K in HandleKind]: z.ZodType<HandlePayloads[K]> } = HANDLE_PAYLOADS

export function ownedSessions(
  principal: Principal,
  codec: HandleCodec,
  signer: OwnershipSignerLike,
  runtime: RuntimePort,
): OwnedSessions {
  const identity = principal.identity

  const seal = <K extends HandleKind>(kind: K, payload: HandlePayloads[K]): Promise<string> =>
    codec.seal(kind, identity, payload)

  async function open<K extends HandleKind>(kind: K, handle: string): Promise<HandlePayloads[K]> {
    const parsed = PAYLOAD_SCHEMAS[kind].safeParse(await codec.open(kind, identity, handle))
    if (!parsed.success) throw notFound()
    return parsed.data
  }

  async function isOwned(session: RuntimeSession): Promise<boolean> {
    return signer.verify(session.id, identity, session.metadata?.[OWNER_KEY])
  }

  async function loadOwned(sessionId: string): Promise<RuntimeSession> {
    const session = await runtime.getSession(sessionId)
    if (session === undefined || !(await isOwned(session))) throw notFound()
    return session
  }

  async function interactionOf(
    handle: string,
  ): Promise<{ sessionId: string; requestId: string; kind: 'permission' | 'question' }> {
    const { s, r, k } = await open('interaction', handle)
    return { sessionId: s, requestId: r, kind: k === 'p' ? 'permission' : 'question' }
  }

  async function jobOf(handle: string): Promise<{ sessionId: string; messageId: string; startedAt: number }> {
    const { s, m, t } = await open('job', handle)
    return { sessionId: s, messageId: m, startedAt: t }
  }

  return {
    sealSession: (id) => seal('session', { s: id }),
    sealJob: (s, m, t) => seal('job', { s, m, t }),
    sealInteraction: (s, r, kind) => seal('interaction', { s, r, k: kind === 'permission' ? 'p' : 'q' }),
    sealMessage: (s, m) => seal('message', { s, m }),
    sealRequestState: (state) => seal('request_state', state),
    async openSession(handle) {
      return loadOwned((await open('session', handle)).s)
    },
    async openJob(handle) {
      const { sessionId, messageId, startedAt } = await jobOf(handle)
      return { session: await loadOwned(sessionId), messageId, startedAt }
    },
    sessionIdOf: async (handle) => (await open('session', handle)).s,
    loadOwned,
    jobOf,
    async openInteraction(handle) {
      const { sessionId, requestId, kind } = await interactionOf(handle)
      return { session: await loadOwned(sessionId), requestId, kind }
    },
    interactionOf,
    openRequestState: (handle) => open('request_state', handle),
    async openMessage(handle, sessionId) {
      const { s, m } = await open('message', handle)
      if (s !== sessionId) throw notFound()
      return m
    },
    isOwned,
    identity,
    async ownershipMetadata(sessionId) {
      return { [OWNER_KEY]: await signer.sign(sessionId, identity) }
    },
  }
}
