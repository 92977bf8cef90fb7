import { describe, expect, it } from 'vitest'
import { CliError } from './errors.ts'

describe('CliError.isInstance', () => {
  it('recognises its own errors by the Symbol.for marker (also from another copy of the package)', () => {
    expect(CliError.isInstance(new CliError('ERR_CLI_IO', 'x'))).toBe(true)
    const copy = Object.assign(new Error('x'), {
      code: 'ERR_CLI_IO',
      [Symbol.for('sallyport.cli.CliError')]: true,
    })
    expect(CliError.isInstance(copy)).toBe(true)
  })

  it('refuses a look-alike that only has the name and a code', () => {
    const fake = Object.assign(new Error('x'), { name: 'CliError', code: 'ERR_CLI_IO' })
    expect(CliError.isInstance(fake)).toBe(false)
    expect(CliError.isInstance({ code: 'ERR_CLI_IO' })).toBe(false)
  })
})
