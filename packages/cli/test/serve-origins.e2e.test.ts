import { freePort } from '@sallyport/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startCli } from './cli-process.ts'
import { editConfig, waitForReadyLine } from './stack-fixture.ts'
import { useTempStack } from './temp-stack.ts'

// compose.yaml always defines GATEWAY_ALLOWED_ORIGINS (empty by default): an empty value must
// leave gateway.allowedOrigins of sallyport.json in force.

const stack = useTempStack()
const stops: Array<() => void> = []
beforeAll(() => {
  editConfig(stack.dir, (c) => {
    c.gateway.allowedOrigins = ['https://app.example.com']
  })
})
afterAll(() => {
  for (const stop of stops.reverse()) stop()
})

async function preflightStatus(envValue: string): Promise<number> {
  const port = await freePort()
  const cli = startCli(
    ['serve', '--dir', stack.dir, '--port', String(port), '--native-url', 'http://127.0.0.1:9'],
    { GATEWAY_ALLOWED_ORIGINS: envValue },
  )
  stops.push(() => {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL')
  })
  try {
    await waitForReadyLine(cli, 'serve', 20_000)
    const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example.com',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    })
    return response.status
  } finally {
    cli.child.kill('SIGTERM')
    await cli.exited
  }
}

describe('sallyport serve: allowed origins (built CLI)', () => {
  it('an empty or blank GATEWAY_ALLOWED_ORIGINS keeps gateway.allowedOrigins', async () => {
    expect(await preflightStatus('')).not.toBe(403)
    expect(await preflightStatus('  ')).not.toBe(403)
  })

  it('a non-empty GATEWAY_ALLOWED_ORIGINS replaces it', async () => {
    expect(await preflightStatus('https://other.example.com')).toBe(403)
  })
})
