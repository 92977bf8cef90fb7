import type { RawEvent } from '../schemas.ts'
import { fakeId } from './fake-ids.ts'

/** The fake's `GET /event` side: open SSE connections and what was sent on them. */
export interface FakeEventHub {
  /**
   * Opens one SSE response body; sends `server.connected` first, then heartbeats. The connection
   * ends when the client cancels the body or aborts `signal` (the request's).
   */
  open(signal?: AbortSignal): ReadableStream<Uint8Array>
  /** Sends an event to every open connection and records it. */
  emit(type: string, properties: Record<string, unknown>): RawEvent
  /** Ends every open connection (the client sees the stream end and reconnects). */
  dropAll(): void
  /** Connections open right now. */
  readonly openCount: number
  /** Connections opened since the start (or the last `clearHistory`). */
  readonly openedCount: number
  /** Every event emitted (heartbeats and `server.connected` excluded). */
  readonly history: readonly RawEvent[]
  clearHistory(): void
}

interface Connection {
  readonly controller: ReadableStreamDefaultController<Uint8Array>
  readonly heartbeat: ReturnType<typeof setInterval>
}

const encoder = new TextEncoder()

/** Frames one event the way the runtime does: a single `data:` line of JSON and a blank line. */
function frame(event: RawEvent): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify(event)}\n\n`)
}

/** Creates the hub. `heartbeatMs` is the runtime's 10 s unless a test wants it faster. */
export function createFakeEventHub(heartbeatMs: number): FakeEventHub {
  const connections = new Set<Connection>()
  const history: RawEvent[] = []
  let opened = 0

  const close = (connection: Connection): void => {
    clearInterval(connection.heartbeat)
    connections.delete(connection)
  }

  return {
    open(signal) {
      let connection: Connection | undefined
      return new ReadableStream<Uint8Array>({
        start(controller) {
          signal?.addEventListener('abort', () => {
            if (!connection) return
            close(connection)
            try {
              controller.close()
            } catch {
              // already closed or cancelled
            }
          })
          opened++
          const heartbeat = setInterval(() => {
            try {
              controller.enqueue(frame({ id: fakeId('evt'), type: 'server.heartbeat', properties: {} }))
            } catch {
              if (connection) close(connection)
            }
          }, heartbeatMs)
          heartbeat.unref?.()
          connection = { controller, heartbeat }
          connections.add(connection)
          controller.enqueue(frame({ id: fakeId('evt'), type: 'server.connected', properties: {} }))
        },
        cancel() {
          if (connection) close(connection)
        },
      })
    },
    emit(type, properties) {
      const event: RawEvent = { id: fakeId('evt'), type, properties }
      history.push(event)
      const bytes = frame(event)
      for (const connection of [...connections]) {
        try {
          connection.controller.enqueue(bytes)
        } catch {
          close(connection)
        }
      }
      return event
    },
    dropAll() {
      for (const connection of [...connections]) {
        close(connection)
        try {
          connection.controller.close()
        } catch {
          // already closed by the client
        }
      }
    },
    get openCount() {
      return connections.size
    },
    get openedCount() {
      return opened
    },
    get history() {
      return history
    },
    clearHistory() {
      history.length = 0
      opened = connections.size
    },
  }
}
