import { describe, expect, it } from 'vitest'
import { turnDiffOf } from '../../src/index.ts'
import { useRuntime } from './support.ts'

// `turnDiffOf` stands in for `GET /session/{id}/diff?messageID=` (the gateway takes a finished
// run's changed files from the messages it read anyway). Pinned here on the real runtime, in a git
// workspace (snapshots on): at the idle event and later, the user message's record and the
// endpoint agree, for a run that changed files (one name with a space and non-ASCII letters; the
// runtime stores it unquoted, so the unquoting `turnDiffOf` mirrors is covered by unit tests) and
// for one that changed none.

const e2e = useRuntime('turn-diff', { runtime: { gitInit: true } })

async function runTurn(steps: Parameters<typeof e2e.stack.model.script>[0]): Promise<{
  session: string
  messageID: string
  atIdle: { fromMessages: unknown; endpoint: unknown }
}> {
  const { client, stack } = e2e
  const session = (await client.createSession({ title: 'diff' })).id
  const marker = stack.model.script(steps)
  const messageID = client.newMessageId()
  let seenBusy = false
  const atIdle = new Promise<{ fromMessages: unknown; endpoint: unknown }>((resolve, reject) => {
    const off = client.events.onSession(session, (event) => {
      if (event.type === 'session.status' && event.properties.status.type === 'busy') seenBusy = true
      if (event.type !== 'session.idle' || !seenBusy) return
      off()
      // At the idle event, both at once: what a woken waiter reads.
      Promise.all([client.listMessages(session), client.messageDiff(session, messageID)])
        .then(([{ messages }, endpoint]) => {
          const user = messages.find((m) => m.info.id === messageID)
          resolve({ fromMessages: user && turnDiffOf(user.info), endpoint })
        })
        .catch(reject)
    })
  })
  await client.events.waitUntil(session, async () => (client.events.connected ? true : undefined), {
    timeoutMs: 10_000,
    pollMs: 50,
  })
  await client.promptAsync(session, {
    messageID,
    agent: 'build',
    parts: [{ type: 'text', text: `work ${marker}` }],
  })
  return { session, messageID, atIdle: await atIdle }
}

describe("a turn's changed files from its messages (real runtime)", () => {
  it('equal the diff endpoint at the idle event and after, for a name with a space and accents', async () => {
    const { client, stack } = e2e
    const dir = stack.runtime.directory
    const { session, messageID, atIdle } = await runTurn([
      { toolCall: { name: 'write', input: { filePath: `${dir}/plain.txt`, content: 'one\ntwo\n' } } },
      { toolCall: { name: 'write', input: { filePath: `${dir}/café ü.txt`, content: 'x\n' } } },
      { text: 'written' },
    ])
    expect(atIdle.fromMessages).toEqual(atIdle.endpoint)
    const files = (atIdle.endpoint as Array<{ file?: string }>).map((d) => d.file).sort()
    expect(files).toEqual(['café ü.txt', 'plain.txt'])
    const { messages } = await client.listMessages(session)
    const user = messages.find((m) => m.info.id === messageID)
    expect(user && turnDiffOf(user.info)).toEqual(await client.messageDiff(session, messageID))
  })

  it('are empty for a turn that changed nothing, as the endpoint says', async () => {
    const { atIdle } = await runTurn([{ text: 'nothing to do' }])
    expect(atIdle.endpoint).toEqual([])
    expect(atIdle.fromMessages).toEqual([])
  })
})
