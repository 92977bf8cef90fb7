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
})
