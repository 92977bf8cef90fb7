import type { RuntimePort } from '../runtime/port.js'
import { deriveJobState, START_GRACE_MS } from './derive-job-state.js'

// `concurrentRuns` counts runs, not calls: an `agent.run` with `waitMs: 0` returns at once while
// its run goes on (the review started 60 runs at once against a limit of 16). The run's slot is
// therefore held until the runtime shows the run over, watched here from the event stream.

/** How long one look waits for an event before the watch looks again by itself. */
const LOOK_MS = 5_000

/**
 * Resolves once the run of `messageId` is over: the session went idle after it was seen busy, or
 * (for a run over too quickly to be seen busy, or one that never began) its records say it ended
 * or it showed no sign of beginning within {@link START_GRACE_MS}. Event-driven: costs no read
 * while events flow, one message read per quiet {@link LOOK_MS} otherwise. Never rejects: a
 * runtime that cannot be read, or a port that was closed, ends the watch.
 */
export async function watchRunEnd(
  runtime: RuntimePort,
  sessionId: string,
  messageId: string,
  now: () => number = Date.now,
): Promise<void> {
  const started = now()
  let seenBusy = false
  for (;;) {
    const lookedAt = now()
    let ended: true | undefined
    try {
      // Checked at each event, not once per burst (`afterBurst`): the watch must see the busy of a
      // run whose busy and idle come in one burst.
      ended = await runtime.waitUntil(
        sessionId,
        async () => {
          if ((await runtime.viewStatusOf(sessionId)) !== 'idle') {
            seenBusy = true
            return undefined
          }
          return seenBusy ? true : undefined
        },
        { timeoutMs: LOOK_MS },
      )
    } catch {
      return
    }
    if (ended) return
    // Woken before its deadline with nothing to report: the port is closing.
    if (now() - lookedAt < LOOK_MS / 2) return
    if (seenBusy) continue
    // Never seen busy: not begun yet, or begun and over between two looks.
    let messages: Awaited<ReturnType<RuntimePort['messages']>>
    try {
      messages = await runtime.messages(sessionId, { from: messageId })
    } catch {
      return
    }
    const state = deriveJobState({
      messages,
      messageId,
      session: 'idle',
      pendingAsks: 0,
      now: now(),
      startedAt: started,
    })
    if (state.state !== 'running' || now() - started >= START_GRACE_MS) return
  }
}
