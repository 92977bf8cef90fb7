import { describe, expect, it } from 'vitest'
import { createSseParser, type SseMessage } from './sse-parser.ts'

function parse(chunks: string[]): SseMessage[] {
  const out: SseMessage[] = []
  const parser = createSseParser({ onMessage: (m) => out.push(m) })
  for (const chunk of chunks) parser.push(chunk)
  return out
}

describe('createSseParser', () => {
  it('dispatches one event per blank line', () => {
    expect(parse(['data: {"a":1}\n\ndata: {"b":2}\n\n'])).toEqual([
      { event: 'message', data: '{"a":1}', id: undefined },
      { event: 'message', data: '{"b":2}', id: undefined },
    ])
  })

  it('joins data lines and reads event and id fields', () => {
    expect(parse(['event: x\nid: 7\ndata: one\ndata:two\n\n'])).toEqual([
      { event: 'x', data: 'one\ntwo', id: '7' },
    ])
  })

  it.each([
    ['CRLF', 'data: a\r\n\r\n'],
    ['CR', 'data: a\r\r'],
    ['LF', 'data: a\n\n'],
  ])('accepts %s line endings', (_name, text) => {
    expect(parse([text]).map((m) => m.data)).toEqual(['a'])
  })

  it('reassembles events split across chunks, also inside a CRLF', () => {
    expect(parse(['da', 'ta: hel', 'lo\r', '\n', '\r\n']).map((m) => m.data)).toEqual(['hello'])
  })

  it('ignores comments and events without data', () => {
    expect(parse([': keep-alive\n\nevent: ping\n\ndata: x\n\n']).map((m) => m.data)).toEqual(['x'])
  })

  it('keeps the last id for later events', () => {
    expect(parse(['id: 1\ndata: a\n\ndata: b\n\n']).map((m) => m.id)).toEqual(['1', '1'])
  })

  it('reports activity for every chunk, comments included', () => {
    let activity = 0
    const parser = createSseParser({ onMessage: () => undefined, onActivity: () => activity++ })
    parser.push(': hb\n')
    parser.push('\n')
    expect(activity).toBe(2)
  })
})
