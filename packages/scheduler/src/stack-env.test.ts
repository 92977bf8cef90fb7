import { describe, expect, it } from 'vitest'
import { parseStackEnv, quoteStackEnvValue } from './stack-env.ts'

describe('state/stack.env', () => {
  it('reads back what is quoted, quotes and all', () => {
    const values = {
      SALLYPORT_NATIVE_URL: 'http://[::1]:4096',
      SALLYPORT_WORKSPACE: "/w/it's here",
      EMPTY: '',
    }
    const text = `# header\n${Object.entries(values)
      .map(([name, value]) => `${name}=${quoteStackEnvValue(value)}`)
      .join('\n')}\n`
    expect(Object.fromEntries(parseStackEnv(text))).toEqual(values)
  })

  it('takes an unquoted value as it is and ignores comments, blank and malformed lines', () => {
    const env = parseStackEnv("# c\n\nTZ=UTC\nlower=x\n NAME='y'\nNOEQUALS")
    expect(Object.fromEntries(env)).toEqual({ TZ: 'UTC' })
  })

  it('refuses a value that would span lines', () => {
    for (const value of ['a\nb', 'a\rb', 'a\0b']) expect(() => quoteStackEnvValue(value)).toThrow(RangeError)
  })
})
