import { describe, expect, it } from 'vitest'
import { MessageSchema, PartSchema, SessionEventSchema, SessionSchema } from './schemas.ts'

const ids = { id: 'prt_1', sessionID: 'ses_1', messageID: 'msg_1' }

describe('PartSchema', () => {
  it('accepts the modelled part types', () => {
    expect(PartSchema.parse({ ...ids, type: 'text', text: 'hi' }).type).toBe('text')
    expect(
      PartSchema.parse({
        ...ids,
        type: 'tool',
        callID: 'c',
        tool: 'bash',
        state: { status: 'running', input: {} },
      }).type,
    ).toBe('tool')
  })

  it('lets unknown part types through unchanged', () => {
    const part = { ...ids, type: 'session-next-thing', payload: { x: 1 } }
    expect(PartSchema.parse(part)).toEqual(part)
  })

  it('rejects a malformed modelled part instead of passing it as unknown', () => {
    expect(PartSchema.safeParse({ ...ids, type: 'text' }).success).toBe(false)
    expect(PartSchema.safeParse({ ...ids, type: 'tool', tool: 'bash' }).success).toBe(false)
  })
})

describe('SessionSchema', () => {
  it('keeps unknown fields', () => {
    const session = { id: 'ses_1', title: 't', time: { created: 1, updated: 2 }, slug: 'x', brandNew: true }
    expect(SessionSchema.parse(session)).toEqual(session)
  })

  it('fails when a used field changes type', () => {
    expect(SessionSchema.safeParse({ id: 'ses_1', title: 5, time: { created: 1, updated: 2 } }).success).toBe(
      false,
    )
  })
})

describe('MessageSchema', () => {
  it('discriminates user and assistant infos', () => {
    const user = { id: 'msg_1', sessionID: 'ses_1', role: 'user', time: { created: 1 } }
    const assistant = { ...user, id: 'msg_2', role: 'assistant', parentID: 'msg_1' }
    expect(MessageSchema.parse({ info: user, parts: [] }).info.role).toBe('user')
    expect(MessageSchema.safeParse({ info: { ...assistant, parentID: undefined }, parts: [] }).success).toBe(
      false,
    )
    expect(MessageSchema.safeParse({ info: { ...user, role: 'system' }, parts: [] }).success).toBe(false)
  })
})

describe('SessionEventSchema', () => {
  it('types a permission.asked event', () => {
    const event = SessionEventSchema.parse({
      type: 'permission.asked',
      properties: { id: 'per_1', sessionID: 'ses_1', permission: 'bash', patterns: ['ls'], always: [] },
    })
    expect(event.type === 'permission.asked' && event.properties.permission).toBe('bash')
  })
})

describe('AgentSchema', () => {
  it('accepts the null flags 1.18.33 sends for some agents', async () => {
    const { AgentSchema } = await import('./schemas.ts')
    expect(AgentSchema.safeParse({ name: 'x', mode: 'primary', hidden: null, native: null }).success).toBe(
      true,
    )
  })
})
