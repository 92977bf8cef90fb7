import { describe, expect, it } from 'vitest'
import { PeerTestsError } from './errors.ts'

describe('PeerTestsError.isInstance', () => {
  it('recognises its errors by the shared marker, not by class identity', () => {
    const error = new PeerTestsError('ERR_PEER_SPAWN', 'could not start')
    expect(PeerTestsError.isInstance(error)).toBe(true)
    // A copy from another instance of the package carries the same Symbol.for marker.
    const copy = Object.assign(new Error('copy'), {
      [Symbol.for('sallyport.peer-tests.PeerTestsError')]: true,
    })
    expect(PeerTestsError.isInstance(copy)).toBe(true)
    expect(PeerTestsError.isInstance(new Error('other'))).toBe(false)
    expect(PeerTestsError.isInstance({ code: 'ERR_PEER_SPAWN' })).toBe(false)
    expect(PeerTestsError.isInstance(null)).toBe(false)
  })
})
