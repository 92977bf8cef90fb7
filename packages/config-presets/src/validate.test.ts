import { describe, expect, it } from 'vitest'
import { baseUrlAdvice, checkBaseUrl, checkModelId, checkPresetId, describeUrl } from './validate.js'

describe('base URLs', () => {
  it('keeps http(s) URLs without their trailing slash', () => {
    expect(checkBaseUrl('http://10.0.0.5:8080/v1/')).toBe('http://10.0.0.5:8080/v1')
    expect(checkBaseUrl('https://llm.internal.example/openai/v1')).toBe(
      'https://llm.internal.example/openai/v1',
    )
  })

  it('explains /v1 and what localhost means where the runtime runs', () => {
    expect(baseUrlAdvice('http://localhost:11434', 'container')).toEqual([
      expect.stringContaining("assistant runtime's own container, not the host"),
      expect.stringContaining('/v1'),
    ])
    expect(baseUrlAdvice('http://127.0.0.1:8080/v1', 'host')).toEqual([
      expect.stringContaining('the machine the assistant runtime runs on'),
    ])
    expect(baseUrlAdvice('http://172.17.0.1:8080/v1', 'container')).toEqual([])
  })

  it('never shows a password in a message', () => {
    expect(describeUrl('http://u:secret@host:1/v1?token=x')).toBe('"http://host:1/v1"')
    expect(describeUrl('not a url u:secret@host')).not.toContain('secret@')
  })
})

describe('ids', () => {
  it.each(['local', 'llama-cpp', 'vllm_2', 'a'])('accepts the preset id %s', (id) => {
    expect(checkPresetId(id)).toBe(id)
  })
  it.each(['', 'Local', '-x', 'x-', 'a/b', 'a b', 'x'.repeat(65)])('refuses the preset id %j', (id) => {
    expect(() => checkPresetId(id)).toThrow(/invalid preset id/)
  })
  it.each(['gpt-4o-mini', 'llama3.1:8b', 'Qwen/Qwen2.5-Coder-32B-Instruct', 'org@model+v2'])(
    'accepts the model id %s',
    (m) => {
      expect(checkModelId(m)).toBe(m)
    },
  )
  it.each(['', ' x', 'a b', 'a//b', 'x'.repeat(201), 'bad\nid'])('refuses the model id %j', (m) => {
    expect(() => checkModelId(m)).toThrow(/invalid model id/)
  })
})
