import { describe, expect, it } from 'vitest'
import { isNativeMessageId } from '../../src/index.ts'
import {
  collect,
  eventSeen,
  streamReady,
  texts,
  toolParts,
  turnEnded,
  turnMessages,
  useRuntime,
} from './support.ts'

// A git workspace: the runtime snapshots it, which per-message diffs need.
const e2e = useRuntime('turns', { runtime: { gitInit: true } })

describe('end to end: turns through the client (real runtime, scripted model)', () => {
  it('a text turn completes and every assistant message carries the chosen message id as parentID', async () => {
    const { client, stack } = e2e
    expect(await client.health()).toMatchObject({ healthy: true, version: '1.18.33' })
    const session = await client.createSession({
      title: 'text turn',
      agent: 'remote',
      metadata: { owner: 'e2e' },
    })
    expect(session).toMatchObject({ title: 'text turn', agent: 'remote', metadata: { owner: 'e2e' } })
    const { events, off } = collect(client, session.id)
    await streamReady(client, session.id)
    const marker = stack.model.script([{ text: 'hello from the model' }])
    const messageID = client.newMessageId()
    expect(isNativeMessageId(messageID)).toBe(true)
    await client.promptAsync(session.id, {
      messageID,
      agent: 'remote',
      parts: [{ type: 'text', text: `say hello ${marker}`, metadata: { gatewayJob: 'job-1' } }],
    })
    const messages = await turnEnded(client, session.id, messageID)
    const user = messages.find((m) => m.info.id === messageID)
    expect(user?.info.role).toBe('user')
    expect(user?.parts[0]).toMatchObject({ type: 'text', metadata: { gatewayJob: 'job-1' } })
    const answer = turnMessages(messages, messageID)
    expect(answer.length).toBeGreaterThanOrEqual(1)
    for (const message of answer)
      expect(message.info.role === 'assistant' && message.info.parentID).toBe(messageID)
    expect(texts(answer)).toContain('hello from the model')
    expect(answer.at(-1)?.info).toMatchObject({ finish: 'stop' })
    expect((await client.getMessage(session.id, messageID)).info.id).toBe(messageID)
    // Events: the user message, busy, the answer, idle.
    await eventSeen(client, session.id, events, (e) => e.type === 'session.idle')
    expect(events.some((e) => e.type === 'message.updated' && e.properties.info.id === messageID)).toBe(true)
    expect(events.some((e) => e.type === 'session.status' && e.properties.status.type === 'busy')).toBe(true)
    expect(
      events.some(
        (e) =>
          e.type === 'message.updated' &&
          e.properties.info.role === 'assistant' &&
          e.properties.info.parentID === messageID,
      ),
    ).toBe(true)
    off()
    expect((await client.listSessions()).map((s) => s.id)).toContain(session.id)
  })

  it('a question is asked, answered, and the turn goes on', async () => {
    const { client, stack } = e2e
    const session = await client.createSession({ title: 'question', agent: 'remote' })
    const { events, off } = collect(client, session.id)
    await streamReady(client, session.id)
    const marker = stack.model.script([
      {
        toolCall: {
          name: 'question',
          input: {
            questions: [
              {
                question: 'Which colour?',
                header: 'Colour',
                options: [
                  { label: 'Blue', description: 'The sky' },
                  { label: 'Red', description: 'The fire' },
                ],
              },
            ],
          },
        },
      },
      (request) => ({ text: `you said ${request.toolResults.join('')}` }),
    ])
    const messageID = client.newMessageId()
    await client.promptAsync(session.id, {
      messageID,
      agent: 'remote',
      parts: [{ type: 'text', text: `ask ${marker}` }],
    })
    const asked = await eventSeen(client, session.id, events, (e) => e.type === 'question.asked', 15_000)
    const pending = await client.listQuestions(session.id)
    expect(pending).toHaveLength(1)
    const question = pending[0]
    expect(asked.type === 'question.asked' && asked.properties.id).toBe(question?.id)
    expect(question?.questions[0]?.options.map((o) => o.label)).toEqual(['Blue', 'Red'])
    expect((await client.sessionStatus())[session.id]).toEqual({ type: 'busy' })
    expect(await client.replyQuestion(question?.id ?? '', [['Blue']])).toBe(true)
    const messages = await turnEnded(client, session.id, messageID)
    const tool = toolParts(turnMessages(messages, messageID)).find((p) => p.tool === 'question')
    expect(tool?.state).toMatchObject({ status: 'completed' })
    expect(tool?.state.output).toContain('Blue')
    expect(texts(turnMessages(messages, messageID)).join(' ')).toContain('Blue')
    await eventSeen(client, session.id, events, (e) => e.type === 'question.replied')
    expect(await client.listQuestions(session.id)).toEqual([])
    off()
  })

  it('abort stops a slow turn', async () => {
    const { client, stack } = e2e
    const session = await client.createSession({ title: 'slow', agent: 'remote' })
    const { events, off } = collect(client, session.id)
    await streamReady(client, session.id)
    const marker = stack.model.script([
      { text: ['one ', 'two ', 'three ', 'four'], delayMs: 200, intervalMs: 1_000 },
    ])
    const messageID = client.newMessageId()
    await client.promptAsync(session.id, {
      messageID,
      agent: 'remote',
      parts: [{ type: 'text', text: `slowly ${marker}` }],
    })
    await stack.model.waitForRequest(
      (r) => r.kind === 'chat' && r.scriptId !== undefined && marker.includes(r.scriptId),
      10_000,
    )
    expect((await client.sessionStatus())[session.id]).toEqual({ type: 'busy' })
    const started = Date.now()
    expect(await client.abortSession(session.id)).toBe(true)
    const messages = await turnEnded(client, session.id, messageID, 5_000)
    expect(Date.now() - started).toBeLessThan(3_000) // well before the 4 s the answer would take
    expect(turnMessages(messages, messageID).at(-1)?.info).toMatchObject({
      error: { name: 'MessageAbortedError' },
    })
    expect(texts(turnMessages(messages, messageID)).join('')).not.toContain('four')
    await eventSeen(
      client,
      session.id,
      events,
      (e) => e.type === 'session.error' && e.properties.error?.name === 'MessageAbortedError',
    )
    off()
  })

  it('fork copies the messages and the metadata, which is then rewritten on the fork', async () => {
    const { client, stack } = e2e
    const session = await client.createSession({
      title: 'origin',
      agent: 'remote',
      metadata: { owner: 'alice', mac: 'm1' },
    })
    const messageID = client.newMessageId()
    const marker = stack.model.script([{ text: 'original answer' }])
    await client.promptAsync(session.id, {
      messageID,
      agent: 'remote',
      parts: [{ type: 'text', text: `hi ${marker}` }],
    })
    const original = await turnEnded(client, session.id, messageID)
    const fork = await client.forkSession(session.id)
    expect(fork.id).not.toBe(session.id)
    expect(fork.title).toContain('(fork #1)')
    expect(fork.metadata).toEqual({ owner: 'alice', mac: 'm1' }) // copied: must be rewritten
    const copied = (await client.listMessages(fork.id)).messages
    expect(copied.map((m) => m.info.role)).toEqual(original.map((m) => m.info.role))
    expect(texts(copied)).toEqual(texts(original))
    expect(copied.map((m) => m.info.id)).not.toContain(messageID)
    const forkEvents = collect(client, fork.id)
    await streamReady(client, fork.id)
    const rewritten = await client.updateSessionMetadata(fork.id, { owner: 'alice', mac: 'm2' })
    expect(rewritten.metadata).toEqual({ owner: 'alice', mac: 'm2' })
    await eventSeen(
      client,
      fork.id,
      forkEvents.events,
      (e) => e.type === 'session.updated' && e.properties.info.metadata?.mac === 'm2',
    )
    forkEvents.off()
    expect((await client.getSession(fork.id)).metadata).toEqual({ owner: 'alice', mac: 'm2' })
    expect((await client.getSession(session.id)).metadata).toEqual({ owner: 'alice', mac: 'm1' })
    // A fork at the first message copies nothing before it.
    const empty = await client.forkSession(session.id, { messageID })
    expect((await client.listMessages(empty.id)).messages).toEqual([])
  })

  it('todos, catalog and config reads go through the client', async () => {
    const { client, stack } = e2e
    const session = await client.createSession({ title: 'todos' })
    const { events, off } = collect(client, session.id)
    await streamReady(client, session.id)
    const marker = stack.model.script([
      {
        toolCall: {
          name: 'todowrite',
          input: { todos: [{ content: 'write the client', status: 'in_progress', priority: 'high' }] },
        },
      },
      { text: 'noted' },
    ])
    const messageID = client.newMessageId()
    await client.promptAsync(session.id, { messageID, parts: [{ type: 'text', text: `plan ${marker}` }] })
    await turnEnded(client, session.id, messageID)
    expect(await client.todos(session.id)).toEqual([
      expect.objectContaining({ content: 'write the client', status: 'in_progress', priority: 'high' }),
    ])
    await eventSeen(client, session.id, events, (e) => e.type === 'todo.updated')
    off()
    expect((await client.listAgents()).map((a) => a.name)).toEqual(
      expect.arrayContaining(['build', 'remote', 'remote-full']),
    )
    const catalog = await client.listProviders()
    expect(catalog.connected).toContain('fake')
    // The light listing names exactly the connected providers, with the same default models.
    const usable = await client.configuredProviders()
    expect(usable.providers.map((p) => p.id).sort()).toEqual([...catalog.connected].sort())
    expect(usable.default).toEqual(
      Object.fromEntries(Object.entries(catalog.default).filter(([id]) => catalog.connected.includes(id))),
    )
    expect((await client.getConfig()).model).toBe('fake/fake-1')
    expect(await client.getGlobalConfig()).toBeTypeOf('object')
  })

  it('the per-message diff lists the files a turn wrote', async () => {
    const { client, stack } = e2e
    const session = await client.createSession({ title: 'diff' })
    const filePath = `${stack.runtime.directory}/hello.txt`
    const marker = stack.model.script([
      { toolCall: { name: 'write', input: { filePath, content: 'hello\n' } } },
      { text: 'written' },
    ])
    const messageID = client.newMessageId()
    await client.promptAsync(session.id, { messageID, parts: [{ type: 'text', text: `write it ${marker}` }] })
    const messages = await turnEnded(client, session.id, messageID)
    expect(toolParts(messages).find((p) => p.tool === 'write')?.state.status).toBe('completed')
    const diff = await client.events.waitUntil(
      session.id,
      async () => {
        const files = await client.messageDiff(session.id, messageID)
        return files.length > 0 ? files : undefined
      },
      { timeoutMs: 5_000, pollMs: 200 },
    )
    expect(diff).toEqual([expect.objectContaining({ file: 'hello.txt', additions: 1 })])
  })

  it('unknown ids come back as ERR_UPSTREAM_NOT_FOUND', async () => {
    const { client } = e2e
    await expect(client.getSession('ses_doesnotexist00000000000000')).rejects.toMatchObject({
      code: 'ERR_UPSTREAM_NOT_FOUND',
      status: 404,
      operation: 'session.get',
    })
  })
})
