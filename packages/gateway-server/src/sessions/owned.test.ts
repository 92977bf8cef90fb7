import { createHandleCodec, createOwnershipSigner } from '@sallyport/handles'
import { describe, expect, it } from 'vitest'
import type { RuntimePort } from '../runtime/port.js'
import { ownedSessions } from './owned.js'

const secret = new Uint8Array(32).fill(7)
const principal = { username: 'owner', identity: `id_${'A'.repeat(22)}`, policy: 'full' as const }
const runtime = {} as RuntimePort
const codec = createHandleCodec({ secret })
const owned = ownedSessions(principal, codec, createOwnershipSigner({ secret }), runtime)
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

  it('reads a job handle without a usable start time as started at 0', async () => {
    for (const t of [undefined, 'soon', null]) {
      const job = await codec.seal('job', principal.identity, {
        s: SESSION,
        m: MESSAGE,
        ...(t !== undefined && { t }),
      })
      expect((await owned.jobOf(job)).startedAt).toBe(0)
    }
  })

  it.each([
    ['a session handle without its id', 'session', {}],
    ['a session handle with an empty id', 'session', { s: '' }],
    ['a job handle whose message id is not a string', 'job', { s: SESSION, m: 7, t: 1 }],
    ['an interaction handle of an unknown kind', 'interaction', { s: SESSION, r: 'per_1', k: 'x' }],
    ['a message handle without its message id', 'message', { s: SESSION }],
  ] as const)('refuses %s as not_found (each kind has its payload schema)', async (_label, kind, payload) => {
    const handle = await codec.seal(kind, principal.identity, payload)
    const opening = {
      session: () => owned.sessionIdOf(handle),
      job: () => owned.jobOf(handle),
      interaction: () => owned.openInteraction(handle),
      message: () => owned.openMessage(handle, SESSION),
    }[kind]
    await expect(opening()).rejects.toMatchObject({ code: 'not_found' })
  })
})
