import type { RawEvent, UpstreamClient } from '@sallyport/upstream-client'
import type { RuntimeStatus } from './port.js'

/**
 * Session run status (busy, retry; idle when absent) kept from the runtime's event stream, so
 * read-only views (`session.get`, `session.list`) cost no `GET /session/status`. It may lag the
 * runtime by one event and is NEVER used for decisions (busy checks, job state, cancel), which
 * read the runtime directly.
 *
 * While the stream is down it knows nothing (`undefined`). After every (re)connect it loads the
 * whole map once; an event that arrives during that load wins over the loaded value for its
 * session (the runtime emits an event on every transition, so a later one always corrects it).
 */
export interface StatusView {
  /** The status, or `undefined` when the view is not in sync (ask the runtime instead). */
  get(sessionId: string): RuntimeStatus | undefined
  /** All non-idle sessions, or `undefined` when not in sync. */
  all(): ReadonlyMap<string, RuntimeStatus> | undefined
  close(): void
}

/** What the view needs of the upstream client (a structural subset, so tests can stand in). */
interface Source {
  sessionStatus(): Promise<Record<string, { type?: unknown }>>
  events: Pick<UpstreamClient['events'], 'onEvent' | 'onConnectionChange' | 'connected'>
}

const toStatus = (type: unknown): RuntimeStatus =>
  type === 'busy' ? 'busy' : type === 'retry' ? 'retry' : 'idle'

export function createStatusView(client: Source): StatusView {
  const statuses = new Map<string, RuntimeStatus>()
  let synced = false
  let generation = 0
  let touched: Set<string> | undefined

  function set(sessionId: string, status: RuntimeStatus): void {
    if (status === 'idle') statuses.delete(sessionId)
    else statuses.set(sessionId, status)
    touched?.add(sessionId)
  }

  async function sync(): Promise<void> {
    const mine = ++generation
    synced = false
    touched = new Set()
    let loaded: Record<string, { type?: unknown }>
    try {
      loaded = await client.sessionStatus()
    } catch {
      return // stays out of sync until the next connect; views ask the runtime meanwhile
    }
    if (mine !== generation || !client.events.connected) return
    const seen = touched
    for (const id of [...statuses.keys()]) if (!seen.has(id) && !(id in loaded)) statuses.delete(id)
    for (const [id, status] of Object.entries(loaded)) if (!seen.has(id)) set(id, toStatus(status.type))
    touched = undefined
    synced = true
  }

  function onEvent(event: RawEvent): void {
    const props = (event.properties ?? {}) as { sessionID?: unknown; status?: { type?: unknown } }
    if (typeof props.sessionID !== 'string') return
    if (event.type === 'session.status') set(props.sessionID, toStatus(props.status?.type))
    else if (event.type === 'session.idle' || event.type === 'session.deleted') set(props.sessionID, 'idle')
  }

  // Connection changes first, so the initial connect (triggered by subscribing) is not missed.
  const offConnection = client.events.onConnectionChange((connected) => {
    if (connected) void sync()
    else {
      generation++
      synced = false
    }
  })
  const offEvents = client.events.onEvent(onEvent)
  if (client.events.connected) void sync()

  return {
    get: (sessionId) => (synced ? (statuses.get(sessionId) ?? 'idle') : undefined),
    all: () => (synced ? statuses : undefined),
    close() {
      offEvents()
      offConnection()
      synced = false
    },
  }
}
