import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { humanMessage, resolveLogFormat } from './console-format.ts'
import { createCliLogger } from './logger.ts'

function capture(format: 'json' | 'pretty') {
  const out = new PassThrough()
  let text = ''
  out.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8')
  })
  return { logger: createCliLogger(out, 'info', format), text: () => text }
}

describe('resolveLogFormat', () => {
  it('is human on a terminal and JSON otherwise, unless told', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty')
    expect(resolveLogFormat('auto', false)).toBe('json')
    expect(resolveLogFormat('json', true)).toBe('json')
    expect(resolveLogFormat('pretty', false)).toBe('pretty')
  })
})

describe('humanMessage', () => {
  it('names the processes of the stack in words', () => {
    expect(humanMessage({ event: 'child_started', child: 'assistant', pid: 12 })).toBe(
      'started the assistant runtime',
    )
    expect(
      humanMessage({
        event: 'runtime_ready',
        child: 'moderator',
        url: 'http://127.0.0.1:4097',
        version: '1.2.3',
      }),
    ).toBe('moderator runtime ready at http://127.0.0.1:4097 (OpenCode 1.2.3)')
  })

  it('says where the gateway listens and what is ready, once', () => {
    expect(humanMessage({ event: 'listening', url: 'http://127.0.0.1:8787', msg: 'gateway listening' })).toBe(
      'gateway listening on http://127.0.0.1:8787',
    )
    expect(
      humanMessage({
        event: 'ready',
        mcpUrl: 'http://x/mcp',
        msg: 'sallyport is up: MCP endpoint http://x/mcp',
      }),
    ).toBe('sallyport is up: MCP endpoint http://x/mcp')
  })

  it("shows a child's plain line as written and a JSON line by its message", () => {
    expect(humanMessage({ event: 'child_output', child: 'assistant', line: 'stream error' })).toBe(
      'assistant runtime | stream error',
    )
    const inner = JSON.stringify({ level: 'warn', msg: 'task skipped', event: 'x' })
    expect(humanMessage({ event: 'child_output', child: 'scheduler', line: inner })).toBe(
      'scheduler | warn: task skipped',
    )
    expect(humanMessage({ event: 'child_output', child: 'scheduler', line: '{not json' })).toBe(
      'scheduler | {not json',
    )
  })

  it('renders an audit record as who did what and how it ended', () => {
    expect(
      humanMessage({
        event: 'audit',
        requestId: 'ab12',
        username: 'owner',
        tool: 'gateway.job.get',
        outcome: 'ok',
        status: 200,
        durationMs: 12.4,
      }),
    ).toBe('owner gateway.job.get ok (200, 12 ms)')
    expect(
      humanMessage({
        event: 'audit',
        username: 'bot',
        tool: 'gateway.agent.run',
        outcome: 'refused',
        errorCode: 'input_blocked',
        screening: 'blocked',
        status: 200,
      }),
    ).toBe('bot gateway.agent.run refused: input_blocked (screening: blocked) (200)')
  })

  it('falls back to the message and the remaining fields', () => {
    expect(humanMessage({ event: 'gateway_close_failed', msg: 'boom', code: 'E1', requestId: 'x' })).toBe(
      'boom code=E1',
    )
    expect(humanMessage({ event: 'odd' })).toBe('odd')
  })
})

describe('createCliLogger', () => {
  it('writes one short human line per record in the pretty format', () => {
    const { logger, text } = capture('pretty')
    logger.info({ event: 'child_started', child: 'assistant', pid: 1 })
    logger.warn({ event: 'credentials_reload_failed', code: 'E' }, 'credentials could not be reloaded')
    const lines = text().trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: started the assistant runtime$/)
    expect(lines[1]).toMatch(/WARN: credentials could not be reloaded code=E$/)
    expect(text()).not.toContain('{')
  })

  it('never shows a redacted field in either format', () => {
    for (const format of ['pretty', 'json'] as const) {
      const { logger, text } = capture(format)
      logger.info({ event: 'odd', key: 'sk-secret-value', nested: { password: 'hunter2' } }, 'careful')
      expect(text()).not.toContain('sk-secret-value')
      expect(text()).not.toContain('hunter2')
    }
  })

  it('writes JSON lines in the json format', () => {
    const { logger, text } = capture('json')
    logger.info({ event: 'child_started', child: 'assistant' })
    logger.flush()
    expect(JSON.parse(text().trim())).toMatchObject({ event: 'child_started', child: 'assistant' })
  })
})
