// A stand-in for the upstream client's event stream, driven by the test (the status and todo
// views' tests).
import type { RawEvent } from '@sallyport/upstream-client'

export function fakeEvents() {
  let eventHandler: ((e: RawEvent, size: number) => void) | undefined
  let connectionHandler: ((c: boolean) => void) | undefined
  const events = {
    connected: false,
    onEvent: (h: (e: RawEvent, size: number) => void) => {
      eventHandler = h
      return () => {
        eventHandler = undefined
      }
    },
    onConnectionChange: (h: (c: boolean) => void) => {
      connectionHandler = h
      return () => {
        connectionHandler = undefined
      }
    },
  }
  return {
    events,
    /** The stream goes live (or down), and says so. */
    connect: (connected: boolean) => {
      events.connected = connected
      connectionHandler?.(connected)
    },
    emit: (type: string, properties: Record<string, unknown>) => eventHandler?.({ type, properties }, 0),
  }
}
