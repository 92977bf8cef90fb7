import { createHandleCodec, createOwnershipSigner } from '@agentgate/handles'
import { describe, expect, it } from 'vitest'
import type { RuntimePort } from '../runtime/port.js'
import { ownedSessions } from './owned.js'

const secret = new Uint8Array(32).fill(7)
const principal = { username: 'owner', identity: `id_${'A'.repeat(22)}`, policy: 'full' as const }
const runtime = {} as RuntimePort
const owned = ownedSessions(
  principal,
  createHandleCodec({ secret }),
  createOwnershipSigner({ secret }),
  runtime,
)
const SESSION = `ses_${'a'.repeat(26)}`
const MESSAGE = `msg_${'b'.repeat(26)}`

describe('ownedSessions handles', () => {
  it('keeps a job handle short enough to paste (under 200 characters)', async () => {
    const job = await owned.sealJob(SESSION, MESSAGE, Date.now())
    expect(job.length).toBeLessThan(200)
    expect(job).not.toContain(SESSION.slice(4))
  })

  it('round-trips a job handle to its session, message and start time', async () => {
    const startedAt = 1_763_000_000_000
    expect(await owned.jobOf(await owned.sealJob(SESSION, MESSAGE, startedAt))).toEqual({
      sessionId: SESSION,
      messageId: MESSAGE,
      startedAt,
    })
  })

  it('refuses a session handle where a job handle is expected', async () => {
    const session = await owned.sealSession(SESSION)
    await expect(owned.jobOf(session)).rejects.toMatchObject({ code: 'ERR_HANDLE_INVALID' })
  })

  it('refuses a message handle of another session', async () => {
    const message = await owned.sealMessage(SESSION, MESSAGE)
    await expect(owned.openMessage(message, `ses_${'z'.repeat(26)}`)).rejects.toMatchObject({
      code: 'not_found',
    })
  })
})
