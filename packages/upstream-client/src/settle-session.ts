import type { SettleResult, UpstreamClient } from './client-api.ts'
import { UpstreamError } from './errors.ts'
import type { CallOptions } from './invoke.ts'

type Needs = Pick<
  UpstreamClient,
  'listChildren' | 'abortSession' | 'listPermissions' | 'replyPermission' | 'listQuestions' | 'rejectQuestion'
>

/**
 * Aborts a session and its descendants, then rejects their pending permission asks and questions.
 *
 * Why all of it: a session waiting on an ask stays `busy`, and deleting it leaves the ask pending
 * and the id `busy` in the status map until someone answers (NOTES §5). Delete cascades to child
 * (subagent) sessions, which can hold asks of their own, so those are settled too. Asks answered
 * meanwhile (404) are skipped: the goal is that none is left, not that this call answered it.
 */
export async function settleSession(
  ops: Needs,
  sessionId: string,
  options?: CallOptions,
): Promise<SettleResult> {
  // The session first: an abort is worth most the sooner it lands. Its descendants are found
  // through their parents (one small request a session), never by listing every session.
  await ops.abortSession(sessionId, options)
  const below = await descendants(ops, sessionId, options)
  for (const id of below) await ops.abortSession(id, options)
  const sessions = [sessionId, ...below]
  const targets = new Set(sessions)
  const [permissions, questions] = await Promise.all([
    ops.listPermissions(undefined, options),
    ops.listQuestions(undefined, options),
  ])
  const rejectedPermissions: string[] = []
  const rejectedQuestions: string[] = []
  for (const ask of permissions) {
    if (!targets.has(ask.sessionID)) continue
    if (await ignoreGone(ops.replyPermission(ask.id, 'reject', undefined, options)))
      rejectedPermissions.push(ask.id)
  }
  for (const question of questions) {
    if (!targets.has(question.sessionID)) continue
    if (await ignoreGone(ops.rejectQuestion(question.id, options))) rejectedQuestions.push(question.id)
  }
  return { sessions, permissions: rejectedPermissions, questions: rejectedQuestions }
}

/** Ids of every session below `rootId` in the parentID tree, parents before children. */
async function descendants(ops: Needs, rootId: string, options?: CallOptions): Promise<string[]> {
  const out: string[] = []
  const seen = new Set([rootId])
  const queue = [rootId]
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    // A session deleted meanwhile has no children left to settle.
    const children = await ops.listChildren(id, options).catch((error: unknown) => {
      if (UpstreamError.isInstance(error) && error.code === 'ERR_UPSTREAM_NOT_FOUND') return []
      throw error
    })
    for (const child of children) {
      if (seen.has(child.id)) continue
      seen.add(child.id)
      out.push(child.id)
      queue.push(child.id)
    }
  }
  return out
}

async function ignoreGone(call: Promise<boolean>): Promise<boolean> {
  try {
    await call
    return true
  } catch (error) {
    if (UpstreamError.isInstance(error) && error.code === 'ERR_UPSTREAM_NOT_FOUND') return false
    throw error
  }
}
