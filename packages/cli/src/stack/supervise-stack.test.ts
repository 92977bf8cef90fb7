import type { ExitInfo, SupervisedProcess } from '@sallyport/runtime-process'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { CliError } from '../errors.ts'
import { describeFailure, EXIT } from '../exit-codes.ts'
import { UP_EXIT_CODES } from '../main-runtime.ts'
import type { RunningStack } from './start-stack.ts'
import { superviseStack } from './supervise-stack.ts'

/** A child whose exit the test decides. */
function child(name: string): SupervisedProcess & { end(info: ExitInfo): void } {
  let end: (info: ExitInfo) => void = () => {}
  const exit = new Promise<ExitInfo>((resolve) => {
    end = resolve
  })
  return {
    name,
    pid: 1000,
    exit,
    exited: false,
    onLine: () => () => {},
    tail: () => [],
    output: () => [],
    stop: async () => ({ code: 0, signal: null }),
    end: (info) => end(info),
  }
}

function stack(names: string[]) {
  const children = names.map(child)
  const stopped: string[] = []
  const running: RunningStack = {
    children,
    gateway: {} as RunningStack['gateway'],
    stopAll: async () => {
      stopped.push('all')
    },
  }
  return { children, stopped, running }
}

const silent = pino({ level: 'silent' })
const never = new Promise<string>(() => {})

describe('superviseStack', () => {
  it.each([
    ['assistant', { code: null, signal: 'SIGKILL' as const }, 10, 'assistant runtime was killed by SIGKILL'],
    ['moderator', { code: 1, signal: null }, 11, 'moderator runtime exited with code 1'],
    ['scheduler', { code: 0, signal: null }, 12, 'scheduler exited with code 0'],
  ])('%s exits: the rest is stopped and the exit code names it', async (name, info, exitCode, why) => {
    const { children, stopped, running } = stack(['assistant', 'moderator', 'scheduler'])
    const supervised = superviseStack(running, never, silent)
    children.find((c) => c.name === name)?.end(info)
    const error = await supervised.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(CliError.isInstance(error)).toBe(true)
    expect(describeFailure(error)).toEqual({ exitCode, message: `${why}: stopped the stack` })
    expect(stopped).toEqual(['all'])
  })

  it('a stop request stops everything and resolves with the signal', async () => {
    const { stopped, running } = stack(['assistant', 'moderator', 'scheduler'])
    expect(await superviseStack(running, Promise.resolve('SIGTERM'), silent)).toEqual({ reason: 'SIGTERM' })
    expect(stopped).toEqual(['all'])
  })

  it('the codes are distinct from every other exit code, and up --help lists them', () => {
    const codes = Object.values(EXIT)
    expect(new Set(codes).size).toBe(codes.length)
    for (const code of [EXIT.process, EXIT.assistantExited, EXIT.moderatorExited, EXIT.schedulerExited])
      expect(UP_EXIT_CODES).toMatch(new RegExp(`^  ${code} `, 'm'))
  })
})
