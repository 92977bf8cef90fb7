import { newMessageId } from '../message-id.ts'

/**
 * An id in the runtime's native shape with the given prefix (`ses`, `msg`, `prt`, `per`, `que`,
 * `evt`): time-ordered like the runtime's own, so sorting by id matches creation order.
 */
export function fakeId(prefix: string, now: () => number = Date.now): string {
  return `${prefix}_${newMessageId(now).slice('msg_'.length)}`
}
