import { selectAllowedOrigins } from '@sallyport/gateway-server/config'
import { describe, expect, it } from 'vitest'

const configured = ['https://app.example.com']

describe('selectAllowedOrigins (GATEWAY_ALLOWED_ORIGINS over gateway.allowedOrigins)', () => {
  it('uses the configuration when the variable is unset, empty or blank (compose always defines it)', () => {
    expect(selectAllowedOrigins(undefined, configured)).toEqual(configured)
    expect(selectAllowedOrigins('', configured)).toEqual(configured)
    expect(selectAllowedOrigins('   ', configured)).toEqual(configured)
    expect(selectAllowedOrigins(' , ,', configured)).toEqual(configured)
  })

  it('a non-empty variable replaces the configured list (trimmed, comma-separated)', () => {
    expect(selectAllowedOrigins(' https://a.example , https://b.example:8443 ', configured)).toEqual([
      'https://a.example',
      'https://b.example:8443',
    ])
    expect(selectAllowedOrigins('https://a.example', [])).toEqual(['https://a.example'])
  })

  it('returns a fresh array (the configuration is not shared)', () => {
    const out = selectAllowedOrigins(undefined, configured)
    expect(out).not.toBe(configured)
  })
})
