import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { freePort } from './free-port.ts'

describe('freePort', () => {
  it('hands out distinct ports below the ephemeral range, each bindable', async () => {
    const ports: number[] = []
    for (let i = 0; i < 200; i++) ports.push(await freePort())
    expect(new Set(ports).size).toBe(200)
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000)
      expect(port).toBeLessThan(32_768)
    }
    const server = createServer()
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(ports[0], '127.0.0.1', resolve)
    })
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
})
