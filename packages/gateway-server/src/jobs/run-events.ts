import type { RuntimeActivity, RuntimePort } from '../runtime/port.js'

// What a run costs the runtime grows with what its model streams: every chunk is an event the
// runtime stores and publishes, on its one thread, and so is every update of a part, whose data
// grows with the part (a tool's input and output, a text that grows by big chunks: the runtime
// stores and sends the whole of it again). Counting runs cannot bound that (a model can stream
// thousands of chunks at once, or megabytes in a few, or make dozens of tool steps, each one more
// request to the model with the whole history); counting the run's events, each weighted by its
// size, and its steps can. The count feeds the credential's bucket of run events
// (`runEventsPerSecond`).

/**
 * Each this many units of an event's data (about bytes) count as one more event. A streamed chunk
 * of a few words is about 250: most of a small event's cost is its size. A 4 MB chunk held the
 * gateway's and the runtime's threads for long enough to make another credential's workflow 7x
 * slower at p90 when it came every 20 s (at 1 per KiB), so bytes weigh this much.
 */
export const RUN_EVENT_BYTES = 256

/**
 * What the start of a step counts, in events: a step is a request to the model built from the
 * whole history, tools run, messages stored. Measured on the runtime's thread: a step of a run of
 * many tool steps took about 22 ms of its CPU, a streamed chunk about 0.2 ms.
 */
export const RUN_STEP_EVENTS = 100

/** Counts the runtime's events of tracked runs. */
export interface RunEventMeter {
  /**
   * Counts every event of `sessionId`, and of the sessions created under it while tracked (its
   * subagents'), into `count` (one per event, one more per {@link RUN_EVENT_BYTES} of its data,
   * {@link RUN_STEP_EVENTS} more for the start of a step) until the returned stop is called.
   * When two tracks of one session overlap (a run starting as the previous one's watch ends),
   * the newest one is charged.
   */
  track(sessionId: string, count: (events: number) => void): () => void
}

interface Track {
  readonly count: (events: number) => void
  /** The sessions charged to this track: the run's own and its subagents'. */
  readonly sessions: Set<string>
}

/** A meter over `runtime.onActivity`; none (undefined) when the port reports no activity. */
export function createRunEventMeter(runtime: Pick<RuntimePort, 'onActivity'>): RunEventMeter | undefined {
  const subscribe = runtime.onActivity?.bind(runtime)
  if (!subscribe) return undefined
  /** Tracks by session, newest last. */
  const bySession = new Map<string, Track[]>()
  let unsubscribe: (() => void) | undefined
  let tracked = 0

  const add = (sessionId: string, track: Track): void => {
    track.sessions.add(sessionId)
    const list = bySession.get(sessionId)
    if (list) list.push(track)
    else bySession.set(sessionId, [track])
  }
  const onActivity = ({ sessionId, parentId, size, step }: RuntimeActivity): void => {
    if (parentId !== undefined && !bySession.has(sessionId)) {
      const parent = bySession.get(parentId)?.at(-1)
      if (parent) add(sessionId, parent)
    }
    const cost = 1 + Math.max(0, size) / RUN_EVENT_BYTES + (step ? RUN_STEP_EVENTS : 0)
    bySession.get(sessionId)?.at(-1)?.count(cost)
  }

  return {
    track(sessionId, count) {
      const track: Track = { count, sessions: new Set() }
      add(sessionId, track)
      if (tracked++ === 0) unsubscribe = subscribe(onActivity)
      let stopped = false
      return () => {
        if (stopped) return
        stopped = true
        for (const id of track.sessions) {
          const list = bySession.get(id)?.filter((t) => t !== track)
          if (list && list.length > 0) bySession.set(id, list)
          else bySession.delete(id)
        }
        if (--tracked === 0) {
          unsubscribe?.()
          unsubscribe = undefined
        }
      }
    },
  }
}
