import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { GatewayApp } from './app.js'
import { resolveLimits } from './limits.js'
import { createNodeHandler } from './node-adapter.js'

// How the adapter writes an answer: bytes on the socket before the body is first read say
// whether the headers went out on their own.

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
  server = undefined
})

/** Serves one answer of `contentType`; resolves with the socket's bytes written at the first body read. */
async function bytesBeforeBody(contentType: string): Promise<{ before: number; text: string }> {
  let socket: Socket | undefined
  let before = -1
  const app: GatewayApp = {
    fetch: () => Promise.reject(new Error('unused')),
    handle: async () => {
      let sent = false
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (before < 0) before = socket?.bytesWritten ?? -1
            if (sent) controller.close()
            else controller.enqueue(new TextEncoder().encode('{"ok":true}'))
            sent = true
          },
        },
        { highWaterMark: 0 },
      )
      return new Response(body, { status: 200, headers: { 'content-type': contentType } })
    },
  }
  server = createServer(createNodeHandler(app, resolveLimits({}), () => undefined))
  server.on('connection', (s) => {
    socket = s
  })
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const res = await fetch(`http://127.0.0.1:${port}/x`)
  return { before, text: await res.text() }
}

describe('writeResponse', () => {
  it('sends nothing of a JSON answer before its body: headers and body leave in one write', async () => {
    const { before, text } = await bytesBeforeBody('application/json')
    expect(text).toBe('{"ok":true}')
    expect(before).toBe(0)
  })

  it('sends an event stream’s headers at once, before its first event', async () => {
    const { before, text } = await bytesBeforeBody('text/event-stream')
    expect(text).toBe('{"ok":true}')
    expect(before).toBeGreaterThan(0)
  })
})
