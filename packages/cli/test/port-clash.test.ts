import { describe, expect, it } from 'vitest'
import { defaultStackConfig, validateStackConfig } from '../src/stack/stack-config.ts'

function withPorts(edit: (c: ReturnType<typeof defaultStackConfig>) => void): unknown {
  const config = structuredClone(defaultStackConfig('UTC'))
  edit(config)
  return config
}

describe('sallyport.json: every process its own port', () => {
  it('rejects gateway.port equal to moderator.port, naming both settings', () => {
    const result = validateStackConfig(withPorts((c) => (c.moderator.port = c.gateway.port)))
    expect(result).toEqual({
      errors: [
        'moderator.port: 8787 is also gateway.port: the gateway, the native server and the moderator each need their own port',
      ],
    })
  })

  it('rejects a numeric native.port equal to gateway.port or moderator.port', () => {
    expect(validateStackConfig(withPorts((c) => (c.native.port = 8787)))).toEqual({
      errors: [expect.stringMatching(/^native\.port: 8787 is also gateway\.port: /)],
    })
    expect(validateStackConfig(withPorts((c) => (c.native.port = 4097)))).toEqual({
      errors: [expect.stringMatching(/^moderator\.port: 4097 is also native\.port: /)],
    })
  })

  it('a wildcard gateway host overlaps every other host', () => {
    const result = validateStackConfig(
      withPorts((c) => {
        c.gateway.host = '0.0.0.0'
        c.native.host = '10.0.0.5'
        c.native.port = 8787
      }),
    )
    expect('errors' in result).toBe(true)
  })

  it('accepts equal ports on distinct addresses, and "auto"', () => {
    const distinct = withPorts((c) => {
      c.gateway.host = '10.0.0.5'
      c.native.port = 8787
    })
    expect('value' in validateStackConfig(distinct)).toBe(true)
    expect('value' in validateStackConfig(withPorts(() => {}))).toBe(true)
  })
})
