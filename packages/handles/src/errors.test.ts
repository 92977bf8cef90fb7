import { describe, expect, it } from 'vitest'
import { HANDLE_ERROR_MESSAGES, HandleError } from './errors.ts'

describe('HandleError', () => {
  it('carries its code, a fixed message per code and the name HandleError', () => {
    const error = new HandleError('ERR_HANDLE_EXPIRED')
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('HandleError')
    expect(error.code).toBe('ERR_HANDLE_EXPIRED')
    expect(error.message).toBe(HANDLE_ERROR_MESSAGES.ERR_HANDLE_EXPIRED)
  })

  it('gives the three codes three different messages', () => {
    expect(new Set(Object.values(HANDLE_ERROR_MESSAGES)).size).toBe(3)
  })

  it('recognises HandleErrors, also from another copy of the package (its Symbol.for marker), and nothing else', () => {
    // Another copy of the package has another class, but the same registered symbol.
    const foreign = Object.assign(new Error('handle is invalid'), {
      name: 'HandleError',
      code: 'ERR_HANDLE_INVALID',
      [Symbol.for('sallyport.handles.HandleError')]: true,
    })
    expect(HandleError.isInstance(new HandleError('ERR_HANDLE_INVALID'))).toBe(true)
    expect(HandleError.isInstance(foreign)).toBe(true)
    expect(HandleError.isInstance(new Error('handle is invalid'))).toBe(false)
    // A name and a code are not enough: only the marker says which class made it.
    expect(
      HandleError.isInstance(
        Object.assign(new Error('x'), { name: 'HandleError', code: 'ERR_HANDLE_INVALID' }),
      ),
    ).toBe(false)
    expect(HandleError.isInstance({ name: 'HandleError', code: 'ERR_HANDLE_INVALID' })).toBe(false)
    expect(HandleError.isInstance(null)).toBe(false)
  })
})
