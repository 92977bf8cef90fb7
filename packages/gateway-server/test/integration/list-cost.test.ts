import { expect, it } from 'vitest'
import type { Gateway } from '../../src/index.js'
import { SESSIONS_PER_OPERATION } from '../../src/tools/sessions.js'
import { postRpc, rpcCall, useHarness } from './harness.js'

// gateway.session.list for a caller whose sessions are few among many makes the runtime list
// every session, on every call (found by the black-box attack: 10 lists a second among 4 000
// sessions took the runtime's time from everyone). Such a listing counts against the caller's
// rate as one operation more per SESSIONS_PER_OPERATION sessions read; the call itself answers.

const h = useHarness()

const post = async (gateway: Gateway, key: string, id: number, name: string): Promise<number> =>
  (await postRpc(gateway, key, rpcCall(id, name))).status

it('a listing that reads thousands of sessions counts as more than one operation of the caller’s rate', async () => {
  for (let i = 0; i < 2_000; i++) h.fake.addSession({ title: `someone else's ${i}` })
  expect(SESSIONS_PER_OPERATION).toBe(200)
  const g = h.extraGateway({ gateway: { limits: { ratePerSecond: 0.5, rateBurst: 13 } } })
  // chat2 owns none of them, so each of its listings reads them all (the probe of 200, then
  // every session: 2 200 or so): 1 + 11, then 1 + 11 (in debt).
  expect(await post(g, h.creds.keys.chat2, 1, 'gateway.session.list')).toBe(200)
  expect(await post(g, h.creds.keys.chat2, 2, 'gateway.session.list')).toBe(200)
  expect(await post(g, h.creds.keys.chat2, 3, 'gateway.session.list')).toBe(429)
  expect(await post(g, h.creds.keys.chat2, 4, 'gateway.catalog.get')).toBe(429)
  // Its first listing needed every session after the probe (two upstream listings); the next
  // ones within a minute skip the probe (one).
  const g2 = h.extraGateway({})
  const mark = h.fake.requests.length
  expect(await post(g2, h.creds.keys.chat2, 5, 'gateway.session.list')).toBe(200)
  const first = h.requestsSince(mark).filter((r) => r.method === 'GET' && r.path === '/session').length
  const mark2 = h.fake.requests.length
  expect(await post(g2, h.creds.keys.chat2, 6, 'gateway.session.list')).toBe(200)
  const second = h.requestsSince(mark2).filter((r) => r.method === 'GET' && r.path === '/session').length
  expect([first, second]).toEqual([2, 1])
  // Another credential's budget is its own: six cheap calls pass.
  for (let i = 0; i < 6; i++)
    expect(await post(g, h.creds.keys.chat, 10 + i, 'gateway.catalog.get')).toBe(200)
})
