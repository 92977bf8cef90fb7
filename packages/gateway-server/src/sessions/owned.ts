import type { HandleCodec, HandleKind } from '@agentgate/handles'
import { GatewayError } from '../errors.js'
import type { Principal } from '../principal.js'
import type { RuntimePort, RuntimeSession } from '../runtime/port.js'

/** Key of the ownership record inside an upstream session's `metadata`. */
export const OWNER_KEY = 'agentgate'

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
  /** Opens a message handle that must belong to `sessionId`. */
  openMessage(handle: string, sessionId: string): Promise<string>
  isOwned(session: RuntimeSession): Promise<boolean>
  ownershipMetadata(sessionId: string): Promise<Record<string, unknown>>
}

const notFound = (): GatewayError => new GatewayError('not_found', 'Not found.')

export function ownedSessions(
  principal: Principal,
  codec: HandleCodec,
  signer: OwnershipSignerLike,
  runtime: RuntimePort,
): OwnedSessions {
  const identity = principal.identity

  async function open(kind: HandleKind, handle: string): Promise<Record<string, unknown>> {
    return codec.open(kind, identity, handle)
  }
  const str = (value: unknown): string => {
    if (typeof value !== 'string' || value === '') throw notFound()
    return value
  }

  async function isOwned(session: RuntimeSession): Promise<boolean> {
    return signer.verify(session.id, identity, session.metadata?.[OWNER_KEY])
  }

  async function loadOwned(sessionId: string): Promise<RuntimeSession> {
    let session: RuntimeSession
    try {
      session = await runtime.getSession(sessionId)
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_UPSTREAM_NOT_FOUND') throw notFound()
      throw error
    }
    if (!(await isOwned(session))) throw notFound()
    return session
  }

  async function jobOf(handle: string): Promise<{ sessionId: string; messageId: string; startedAt: number }> {
    const payload = await open('job', handle)
    const startedAt = typeof payload.t === 'number' && Number.isFinite(payload.t) ? payload.t : 0
    return { sessionId: str(payload.s), messageId: str(payload.m), startedAt }
  }

  return {
    sealSession: (id) => codec.seal('session', identity, { s: id }),
    sealJob: (s, m, t) => codec.seal('job', identity, { s, m, t }),
    sealInteraction: (s, r, kind) =>
      codec.seal('interaction', identity, { s, r, k: kind === 'permission' ? 'p' : 'q' }),
    sealMessage: (s, m) => codec.seal('message', identity, { s, m }),
    async openSession(handle) {
      const payload = await open('session', handle)
      return loadOwned(str(payload.s))
    },
    async openJob(handle) {
      const { sessionId, messageId, startedAt } = await jobOf(handle)
      return { session: await loadOwned(sessionId), messageId, startedAt }
    },
    sessionIdOf: async (handle) => str((await open('session', handle)).s),
    loadOwned,
    jobOf,
    async openInteraction(handle) {
      const payload = await open('interaction', handle)
      const requestId = str(payload.r)
      const kind = payload.k === 'p' ? 'permission' : payload.k === 'q' ? 'question' : undefined
      if (!kind) throw notFound()
      return { session: await loadOwned(str(payload.s)), requestId, kind }
    },
    async openMessage(handle, sessionId) {
      const payload = await open('message', handle)
      if (payload.s !== sessionId) throw notFound()
      return str(payload.m)
    },
    isOwned,
    async ownershipMetadata(sessionId) {
      return { [OWNER_KEY]: await signer.sign(sessionId, identity) }
    },
  }
}
