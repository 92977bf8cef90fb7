import { describe, expect, it } from 'vitest'
import { requestScopeOf } from './app.js'

describe('requestScopeOf', () => {
  it('reads no scope from a request that did not come through the HTTP boundary', () => {
    expect(requestScopeOf(undefined)).toBeUndefined()
    expect(requestScopeOf({ token: 't', clientId: 'c', scopes: [] })).toBeUndefined()
  })

  it('never takes a look-alike placed in authInfo.extra for a scope the boundary issued', () => {
    const lookAlike = {
      principal: { username: 'owner', identity: 'id_x', policy: 'full' },
      audit: { operations: [], claim: () => ({}) },
      limiter: { take: () => undefined, acquire: () => () => undefined, tokenMs: 100 },
    }
    expect(
      requestScopeOf({ token: 't', clientId: 'owner', scopes: [], extra: { scope: lookAlike } }),
    ).toBeUndefined()
  })
})
