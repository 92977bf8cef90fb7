import { describe, expect, it } from 'vitest'
import {
  classifyChatRequest,
  findScriptId,
  isTitleRequest,
  messageText,
  scriptMarker,
} from './chat-request.ts'

const tools = [{ type: 'function', function: { name: 'bash' } }]

describe('classifyChatRequest', () => {
  it.each([
    ['a fresh turn', [{ role: 'user', content: 'go [[script:s1]]' }], 0],
    [
      'after one tool round trip',
      [
        { role: 'user', content: 'go [[script:s1]]' },
        { role: 'assistant', content: '', tool_calls: [{}] },
        { role: 'tool', content: 'out' },
      ],
      1,
    ],
    [
      'after two round trips with a synthetic user message in between',
      [
        { role: 'user', content: 'go [[script:s1]]' },
        { role: 'assistant', content: '', tool_calls: [{}] },
        { role: 'tool', content: 'out' },
        { role: 'user', content: 'system reminder without marker' },
        { role: 'assistant', content: '', tool_calls: [{}] },
        { role: 'tool', content: 'out2' },
      ],
      2,
    ],
  ])('derives the step from the conversation: %s', (_name, messages, step) => {
    expect(classifyChatRequest({ tools, messages })).toMatchObject({ kind: 'scripted', scriptId: 's1', step })
  })

  it('uses the newest user message with a marker', () => {
    const messages = [
      { role: 'user', content: '[[script:old]]' },
      { role: 'assistant', content: 'x' },
      { role: 'user', content: [{ type: 'text', text: 'again [[script:new]]' }] },
    ]
    expect(classifyChatRequest({ tools, messages })).toMatchObject({ scriptId: 'new', step: 0 })
  })

  it('collects the tool results sent after the last assistant message', () => {
    const messages = [
      { role: 'user', content: '[[script:s]]' },
      { role: 'assistant', content: '', tool_calls: [{}, {}] },
      { role: 'tool', content: 'first' },
      { role: 'tool', content: 'second' },
    ]
    expect(classifyChatRequest({ tools, messages })).toMatchObject({ toolResults: ['first', 'second'] })
  })

  it('is unscripted without a marker and title without tools', () => {
    expect(classifyChatRequest({ tools, messages: [{ role: 'user', content: 'hi' }] }).kind).toBe(
      'unscripted',
    )
    const title = {
      messages: [
        { role: 'system', content: 'You are a title generator' },
        { role: 'user', content: '[[script:s]]' },
      ],
    }
    expect(classifyChatRequest(title).kind).toBe('title')
  })
})

describe('helpers', () => {
  it('builds and finds markers', () => {
    expect(scriptMarker('abc-1')).toBe('[[script:abc-1]]')
    expect(findScriptId('x [[script:a]] y [[script:b]]')).toBe('b')
    expect(findScriptId('[[script:]]')).toBeUndefined()
  })

  it('reads string and part-array content', () => {
    expect(messageText({ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url' }] })).toBe(
      'a\n',
    )
    expect(messageText({ role: 'assistant', content: null })).toBe('')
  })

  it('does not treat a request with tools as a title request', () => {
    expect(isTitleRequest({ tools, messages: [{ role: 'system', content: 'title' }] })).toBe(false)
    expect(isTitleRequest({ tools: [], messages: [{ role: 'system', content: 'You are opencode' }] })).toBe(
      false,
    )
  })
})
