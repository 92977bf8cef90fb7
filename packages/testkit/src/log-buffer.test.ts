import { describe, expect, it } from 'vitest'
import { createLogBuffer } from './log-buffer.ts'

describe('createLogBuffer', () => {
  it('splits chunks into tagged lines across chunk boundaries', () => {
    const seen: string[] = []
    const logs = createLogBuffer()
    logs.onLine((source, line) => seen.push(`${source}:${line}`))
    logs.push('out', 'opencode server list')
    logs.push('err', 'warn\n')
    logs.push('out', 'ening on http://x\npartial')
    expect(seen).toEqual(['err:warn', 'out:opencode server listening on http://x'])
    expect(logs.text()).toBe('[err] warn\n[out] opencode server listening on http://x\n[out] partial')
    expect(logs.tail(1)).toBe('[out] partial')
  })

  it('keeps only the last maxLines lines', () => {
    const logs = createLogBuffer(2)
    logs.push('out', 'a\nb\nc\n')
    expect(logs.text()).toBe('[out] b\n[out] c')
  })
})
