import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '@sallyport/testkit'
import { describe, expect, it } from 'vitest'
import { runCli } from './cli-process.ts'
import { editConfig, logLines } from './stack-fixture.ts'
import { useTempStack } from './temp-stack.ts'

// Equal ports pass each per-port "is it free" check and would only fail once a process binds
// (exit 8): `up` refuses them up front as a configuration problem (exit 3).

const stack = useTempStack()

// Without the check the stack would start: a short deadline keeps a regression quick.
const up = () => runCli(['up', '--dir', stack.dir, '--start-timeout-ms', '3000', '--stop-grace-ms', '500'])

describe('sallyport up: duplicate ports (built CLI)', () => {
  it('gateway.port equal to moderator.port: exit 3, one line, nothing started', async () => {
    const port = await freePort()
    editConfig(stack.dir, (c) => {
      c.gateway.port = port
      c.moderator.port = port
      c.native.port = 'auto'
    })
    const run = await up()
    expect(run.code).toBe(3)
    expect(run.stderr).toBe(
      `sallyport: sallyport.json: moderator.port: ${port} is also gateway.port: the gateway, the native server and the moderator each need their own port\n`,
    )
    expect(logLines(run.stdout).filter((l) => l.event === 'child_started')).toEqual([])
  })

  it('native.port "auto" resolving to gateway.port: exit 3 naming the recorded port', async () => {
    const [port, moderatorPort] = [await freePort(), await freePort()]
    editConfig(stack.dir, (c) => {
      c.gateway.port = port
      c.moderator.port = moderatorPort
      c.native.port = 'auto'
    })
    const envFile = join(stack.dir, 'state/stack.env')
    writeFileSync(
      envFile,
      readFileSync(envFile, 'utf8').replace(/SALLYPORT_NATIVE_PORT='\d+'/, `SALLYPORT_NATIVE_PORT='${port}'`),
    )
    const run = await up()
    expect(run.code).toBe(3)
    expect(run.stderr).toBe(
      `sallyport: native.port ("auto": recorded in state/stack.env): ${port} is also gateway.port: the gateway, the native server and the moderator each need their own port\n`,
    )
    expect(logLines(run.stdout).filter((l) => l.event === 'child_started')).toEqual([])
  })
})
