/** One dispatched server-sent event. */
export interface SseMessage {
  readonly event: string
  readonly data: string
  readonly id: string | undefined
}

/** Receives parsed events, and a signal for every chunk of bytes (comments included). */
export interface SseSink {
  readonly onMessage: (message: SseMessage) => void
  readonly onActivity?: () => void
}

/**
 * A small incremental parser of the `text/event-stream` format (WHATWG HTML §9.2): lines end in
 * CRLF, LF or CR; `data:` lines of one event are joined with `\n`; a blank line dispatches;
 * lines starting with `:` are comments; an event without data is dropped. `retry:` is ignored
 * (the client has its own backoff).
 */
export function createSseParser(sink: SseSink): { push(chunk: string): void } {
  let buffer = ''
  let data: string[] = []
  let event = ''
  let id: string | undefined
  let lastId: string | undefined
  let pendingCr = false

  const dispatch = (): void => {
    if (data.length > 0)
      sink.onMessage({ event: event || 'message', data: data.join('\n'), id: id ?? lastId })
    if (id !== undefined) lastId = id
    data = []
    event = ''
    id = undefined
  }

  const line = (text: string): void => {
    if (text === '') {
      dispatch()
      return
    }
    if (text.startsWith(':')) return
    const colon = text.indexOf(':')
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? '' : text.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') data.push(value)
    else if (field === 'event') event = value
    else if (field === 'id' && !value.includes('\0')) id = value
  }

  return {
    push(chunk) {
      sink.onActivity?.()
      let text = chunk
      // A CR at the end of the previous chunk already ended a line; skip the LF of its CRLF.
      if (pendingCr && text.startsWith('\n')) text = text.slice(1)
      pendingCr = false
      buffer += text
      let start = 0
      for (let i = 0; i < buffer.length; i++) {
        const char = buffer[i]
        if (char !== '\n' && char !== '\r') continue
        line(buffer.slice(start, i))
        if (char === '\r') {
          if (i + 1 === buffer.length) pendingCr = true
          else if (buffer[i + 1] === '\n') i++
        }
        start = i + 1
      }
      buffer = buffer.slice(start)
    },
  }
}
