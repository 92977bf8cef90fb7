import { describe, expect, it } from 'vitest'
import { allowedOrigins } from '../src/stack/allowed-origins.ts'

const configured = ['https://app.example.com']

describe('allowedOrigins (GATEWAY_ALLOWED_ORIGINS over gateway.allowedOrigins)', () => {
  it('uses the configuration when the variable is unset, empty or blank (compose always defines it)', () => {
    expect(allowedOrigins(undefined, configured)).toEqual(configured)
    expect(allowedOrigins('', configured)).toEqual(configured)
    expect(allowedOrigins('   ', configured)).toEqual(configured)
    expect(allowedOrigins(' , ,', configured)).toEqual(configured)
  })

  it('a non-empty variable replaces the configured list (trimmed, comma-separated)', () => {
    expect(allowedOrigins(' https://a.example , https://b.example:8443 ', configured)).toEqual([
      'https://a.example',
      'https://b.example:8443',
    ])
    expect(allowedOrigins('https://a.example', [])).toEqual(['https://a.example'])
  })

  it('returns a fresh array (the configuration is not shared)', () => {
    const out = allowedOrigins(undefined, configured)
    expect(out).not.toBe(configured)
  })
})
