import { HttpResponse, http } from 'msw'
import { describe, expect, it } from 'vitest'
import { useFakeRuntime } from './support/msw.ts'

const { fake, server, client } = useFakeRuntime()

// Measured on opencode 1.18.33: three identical calls of an unavailable tool raise a `doom_loop`
// ask with `tool: null`. Before the fix the whole list failed the schema, so every credential's
// job polling answered `upstream_unavailable` until that ask was answered.
describe('asks raised outside a tool call', () => {
  it('a permission ask with tool: null is listed with the others', async () => {
    server.use(
      http.get(fake.url('/permission'), () =>
        HttpResponse.json([
          {
            id: 'per_1',
            sessionID: 'ses_a',
            permission: 'doom_loop',
            patterns: ['invalid'],
            metadata: { tool: 'invalid' },
            always: ['invalid'],
            tool: null,
          },
          {
            id: 'per_2',
            sessionID: 'ses_b',
            permission: 'bash',
            patterns: ['ls'],
            always: ['ls *'],
            tool: { messageID: 'msg_1', callID: 'call_1' },
          },
        ]),
      ),
    )
    expect((await client().listPermissions()).map((p) => p.id)).toEqual(['per_1', 'per_2'])
  })

  it('a question with tool: null is listed', async () => {
    server.use(
      http.get(fake.url('/question'), () =>
        HttpResponse.json([{ id: 'que_1', sessionID: 'ses_a', questions: [], tool: null }]),
      ),
    )
    expect((await client().listQuestions()).map((q) => q.id)).toEqual(['que_1'])
  })
})
