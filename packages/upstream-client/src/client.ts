import { createOpencodeClient } from '@opencode-ai/sdk/v2/client'
import type { UpstreamClient } from './client-api.ts'
import { createEventStream } from './event-stream.ts'
import { createInteractionOperations } from './interaction-operations.ts'
import { createInvoke, createInvokeGet } from './invoke.ts'
import { newMessageId } from './message-id.ts'
import { resolveOptions, type UpstreamClientOptions } from './options.ts'
import { createRuntimeOperations } from './runtime-operations.ts'
import { BooleanResultSchema } from './schemas.ts'
import { createSessionEvents } from './session-events.ts'
import { createSessionOperations } from './session-operations.ts'
import { settleSession } from './settle-session.ts'
import { createTransport } from './transport.ts'

/**
 * Creates the typed client of one runtime, pinned to one workspace directory.
 *
 * Throws `TypeError`/`RangeError` for bad options (see {@link UpstreamClientOptions}); every call
 * of the returned client fails with an `UpstreamError`.
 *
 * @example
 * const client = createUpstreamClient({ baseUrl: 'http://127.0.0.1:3810', password, directory: '/work' })
 * const session = await client.createSession({ title: 'job', agent: 'remote', metadata: { owner } })
 * const messageID = client.newMessageId()
 * await client.promptAsync(session.id, { messageID, parts: [{ type: 'text', text: 'hi' }] })
 * await client.events.waitUntil(session.id, () => turnDone(messageID), { timeoutMs: 30_000 })
 */
export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const resolved = resolveOptions(options)
  const transport = createTransport(resolved)
  // The SDK gets no credential, directory or fetch of its own: each call passes the transport's
  // fetch, which adds them, so there is exactly one code path that sets them.
  const sdk = createOpencodeClient({ baseUrl: resolved.baseUrl })
  const invoke = createInvoke(transport.send, transport.redact, resolved.timeoutMs)
  const invokeGet = createInvokeGet(transport.get, transport.redact, resolved.timeoutMs)
  const sessions = createSessionOperations(sdk, invoke, invokeGet)
  const interactions = createInteractionOperations(sdk, invoke)
  const events = createSessionEvents(
    createEventStream({
      baseUrl: resolved.baseUrl,
      send: transport.openStream,
      redact: transport.redact,
      connectTimeoutMs: resolved.timeoutMs,
      tuning: resolved.events,
    }),
    {
      statuses: () => sessions.sessionStatus(),
      pollIntervalMs: resolved.events.pollIntervalMs,
      probeAfterMs: resolved.events.probeAfterMs,
      random: resolved.events.random,
    },
  )
  const settleOps = {
    listChildren: sessions.listChildren,
    abortSession: sessions.abortSession,
    listPermissions: interactions.listPermissions,
    replyPermission: interactions.replyPermission,
    listQuestions: interactions.listQuestions,
    rejectQuestion: interactions.rejectQuestion,
  }
  return {
    ...sessions,
    ...interactions,
    ...createRuntimeOperations(sdk, invoke),
    settleSession: (sessionId, callOptions) => settleSession(settleOps, sessionId, callOptions),
    async deleteSession(sessionId, callOptions) {
      const settled = await settleSession(settleOps, sessionId, callOptions)
      await invoke(
        'session.delete',
        BooleanResultSchema,
        (call) => sdk.session.delete({ sessionID: sessionId }, call),
        callOptions,
      )
      return settled
    },
    newMessageId: () => newMessageId(resolved.now),
    events,
    directory: resolved.directory,
    close: () => {
      events.close()
      resolved.ownFetch?.close()
    },
  }
}
