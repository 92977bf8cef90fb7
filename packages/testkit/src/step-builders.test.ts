import { describe, expect, it } from 'vitest'
import { step } from './step-builders.ts'

describe('step builders', () => {
  it('build tool calls with the runtime tool inputs', () => {
    expect(step.bash('ls')).toEqual({
      toolCall: { name: 'bash', input: { command: 'ls', description: 'Run a command' } },
    })
    expect(step.read('/w/a.txt', { limit: 5 })).toEqual({
      toolCall: { name: 'read', input: { filePath: '/w/a.txt', limit: 5 } },
    })
    expect(step.write('/w/a', 'x').toolCall?.input).toEqual({ filePath: '/w/a', content: 'x' })
    expect(step.edit('/w/a', 'x', 'y').toolCall?.input).toEqual({
      filePath: '/w/a',
      oldString: 'x',
      newString: 'y',
    })
    expect(step.todowrite([{ content: 'c', status: 'pending', priority: 'high' }]).toolCall?.name).toBe(
      'todowrite',
    )
  })

  it('build the file search, fetch and subagent calls', () => {
    expect(step.glob('*.ts').toolCall).toEqual({ name: 'glob', input: { pattern: '*.ts' } })
    expect(step.glob('*', '/w/src').toolCall?.input).toEqual({ pattern: '*', path: '/w/src' })
    expect(step.grep('TODO', { include: '*.ts' }).toolCall).toEqual({
      name: 'grep',
      input: { pattern: 'TODO', include: '*.ts' },
    })
    expect(step.list().toolCall).toEqual({ name: 'list', input: {} })
    expect(step.webfetch('http://x/').toolCall).toEqual({
      name: 'webfetch',
      input: { url: 'http://x/', format: 'text', timeout: 10 },
    })
    expect(step.task('do it').toolCall).toEqual({
      name: 'task',
      input: { description: 'subtask', prompt: 'do it', subagent_type: 'general' },
    })
  })

  it('fills question headers and string options', () => {
    expect(
      step.question({
        question: 'Pick a colour please',
        options: ['Blue', { label: 'Red', description: 'warm' }],
      }),
    ).toEqual({
      toolCall: {
        name: 'question',
        input: {
          questions: [
            {
              question: 'Pick a colour please',
              header: 'Pick a colour please',
              options: [
                { label: 'Blue', description: '' },
                { label: 'Red', description: 'warm' },
              ],
            },
          ],
        },
      },
    })
  })

  it('builds text, slow, error and multi-call steps', () => {
    expect(step.text('hi', { delayMs: 5 })).toEqual({ text: 'hi', delayMs: 5 })
    expect(step.slow(['a', 'b'], 100)).toEqual({ text: ['a', 'b'], intervalMs: 100 })
    expect(step.error()).toEqual({ error: {} })
    expect(step.calls({ name: 'read', input: {} }, { name: 'glob', input: {} }).toolCalls).toHaveLength(2)
  })
})
