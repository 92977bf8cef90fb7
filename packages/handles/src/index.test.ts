import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import * as api from './index.ts'

describe('package entry', () => {
  it('exports exactly the public API', () => {
    expect(Object.keys(api).sort()).toEqual(
      [
        'DEFAULT_LIFETIMES_MS',
        'HANDLE_ERROR_MESSAGES',
        'HANDLE_KINDS',
        'HANDLE_PREFIX',
        'HandleError',
        'MAX_CLOCK_SKEW_MS',
        'MAX_HANDLE_LENGTH',
        'MAX_LIFETIME_MS',
        'MIN_SECRET_BYTES',
        'createHandleCodec',
        'createOwnershipSigner',
        'isHandleKind',
      ].sort(),
    )
  })

  it('imports no node: module in its sources, so other runtimes can use it', () => {
    const dir = new URL('./', import.meta.url)
    const sources = readdirSync(dir).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    expect(sources.length).toBeGreaterThan(5)
    for (const name of sources) {
      const text = readFileSync(new URL(name, dir), 'utf8')
      expect(text, name).not.toMatch(/from\s+['"](node:|crypto['"]|buffer['"])/)
      expect(text, name).not.toMatch(/\b(import|require)\s*\(\s*['"]node:/)
      expect(text, name).not.toMatch(/\bBuffer\s*[.(]/)
    }
  })
})
