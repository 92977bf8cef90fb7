import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { codeThrown } from '../test/helpers.ts'
import { SchedulerError } from './errors.ts'
import { checkOutputPath, expandOutputPath } from './output-path.ts'
import {
  checkTaskId,
  DEFAULT_TIMEOUT_SECONDS,
  HOSTILE_CONTENT_GUIDANCE,
  isTaskId,
  MAX_PROMPT_LENGTH,
  MAX_TASK_SOURCE_BYTES,
  parseDuration,
  parseTaskSource,
  renderTaskSource,
  TASK_ID_PATTERN,
  withGuidance,
} from './task-source.ts'

/** The message of the SchedulerError `parseTaskSource` throws for `text` (fails when it parses). */
function problemOf(text: string | Uint8Array, id = 'daily'): string {
  try {
    parseTaskSource(id, text)
  } catch (error) {
    if (SchedulerError.isInstance(error) && error.code === 'ERR_SCHEDULER_INVALID_TASK') return error.message
    throw error
  }
  throw new Error('expected the source to be refused')
}

const source = (lines: string): string => `version: 1\nprompt: Summarise the notes.\n${lines}`

/** C0, DEL and C1: refused in a description. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is matched
const CONTROL_G = /[\u0000-\u001f\u007f-\u009f]/g
/** What a prompt refuses: control characters but line feed, carriage return and tab. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is matched
const PROMPT_REFUSED_G = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g

describe('task ids', () => {
  it.each(['a', 'A', '0', 'daily-report', 'daily_report.v2', 'a..b', 'x.', 'a-', 'a'.repeat(128)])(
    'accepts %j',
    (id) => {
      expect(isTaskId(id)).toBe(true)
      expect(checkTaskId(id)).toBe(id)
    },
  )

  it.each([
    '',
    '..',
    '.',
    '.hidden',
    '-dash',
    '_under',
    'a/b',
    'a\\b',
    'a b',
    'a\nb',
    'rapport-été',
    'タスク',
    'a'.repeat(129),
    'x.yml/..',
  ])('refuses %j', (id) => {
    expect(isTaskId(id)).toBe(false)
    expect(codeThrown(() => checkTaskId(id))).toBe('ERR_SCHEDULER_INVALID_ID')
  })

  it('refuses non-strings and does not echo the id in the message', () => {
    for (const value of [undefined, null, 7, ['a'], { id: 'a' }])
      expect(codeThrown(() => checkTaskId(value))).toBe('ERR_SCHEDULER_INVALID_ID')
    try {
      checkTaskId('../../etc/passwd')
      expect.unreachable()
    } catch (error) {
      expect((error as Error).message).not.toContain('passwd')
    }
  })

  it('128 characters are the limit', () => {
    expect(isTaskId(`a${'b'.repeat(127)}`)).toBe(true)
    expect(isTaskId(`a${'b'.repeat(128)}`)).toBe(false)
  })

  it('property: every id matching the pattern is accepted and can never name a path outside tasks/', () => {
    fc.assert(
      fc.property(fc.stringMatching(TASK_ID_PATTERN), (id) => {
        expect(isTaskId(id)).toBe(true)
        expect(id).not.toContain('/')
        expect(id).not.toMatch(/^[.-]/)
        expect(id.length).toBeLessThanOrEqual(128)
      }),
    )
  })

  it('property: an id with a slash, a backslash, a leading dot or dash, or non-ASCII is refused', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }),
        fc.constantFrom('/', '\\', '\u00e9', '\u0000', ' ', '\u202e'),
        fc.string({ maxLength: 40 }),
        (before, bad, after) => {
          expect(isTaskId(`a${before}${bad}${after}`)).toBe(false)
        },
      ),
    )
    fc.assert(
      fc.property(
        fc.constantFrom('.', '-', '_'),
        fc.stringMatching(/^[A-Za-z0-9._-]{0,20}$/),
        (lead, rest) => {
          expect(isTaskId(`${lead}${rest}`)).toBe(false)
        },
      ),
    )
  })
})

describe('parseDuration', () => {
  it.each([
    ['90s', 90],
    ['10m', 600],
    ['2h', 7200],
    ['1h30m', 5400],
    ['1h0m5s', 3605],
    [' 45s ', 45],
    [600, 600],
    [0, 0],
  ] as const)('%j → %d seconds', (value, seconds) => {
    expect(parseDuration(value)).toBe(seconds)
  })

  it.each(['', ' ', 'h', '1d', '1h 30m', '30m1h', '5', '1.5h', '-5s', '1e3s', 'abc', '1H'] as const)(
    'refuses %j',
    (value) => {
      expect(parseDuration(value)).toBeUndefined()
    },
  )

  it('refuses non-integer numbers', () => {
    expect(parseDuration(1.5)).toBeUndefined()
    expect(parseDuration(Number.NaN)).toBeUndefined()
  })

  it('property: h/m/s components add up', () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 0, max: 99_999 })),
        fc.option(fc.integer({ min: 0, max: 99_999 })),
        fc.option(fc.integer({ min: 0, max: 999_999 })),
        (h, m, s) => {
          fc.pre(h !== null || m !== null || s !== null)
          const text = `${h === null ? '' : `${h}h`}${m === null ? '' : `${m}m`}${s === null ? '' : `${s}s`}`
          expect(parseDuration(text)).toBe((h ?? 0) * 3600 + (m ?? 0) * 60 + (s ?? 0))
        },
      ),
    )
  })

  it('property: any string gives undefined or a non-negative integer', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        const seconds = parseDuration(text)
        if (seconds !== undefined) {
          expect(Number.isInteger(seconds)).toBe(true)
          expect(seconds).toBeGreaterThanOrEqual(0)
        }
      }),
    )
  })
})

describe('parseTaskSource', () => {
  it('reads a complete source', () => {
    const task = parseTaskSource(
      'daily',
      [
        'version: 1',
        'description: Morning summary',
        'schedule: "0 7 * * 1-5"',
        'timeout: 1h30m',
        'model: anthropic/claude-sonnet-4',
        'output: reports/{id}-{date}.md',
        'prompt: |',
        '  Summarise the notes.',
        '  Keep it short.',
        '',
      ].join('\n'),
    )
    expect(task).toEqual({
      version: 1,
      id: 'daily',
      description: 'Morning summary',
      schedule: '0 7 * * 1-5',
      timeout: 5400,
      timeoutSeconds: 5400,
      model: 'anthropic/claude-sonnet-4',
      output: 'reports/{id}-{date}.md',
      prompt: 'Summarise the notes.\nKeep it short.\n',
    })
  })

  it('defaults: manual (no schedule), 10 minute timeout; a null schedule is manual too', () => {
    const task = parseTaskSource('daily', source(''))
    expect(task.schedule).toBeUndefined()
    expect(task.timeoutSeconds).toBe(DEFAULT_TIMEOUT_SECONDS)
    expect(parseTaskSource('daily', source('schedule: null\n')).schedule).toBeUndefined()
  })

  it('accepts bytes as well as text', () => {
    expect(parseTaskSource('daily', new TextEncoder().encode(source(''))).prompt).toBe('Summarise the notes.')
  })

  it('checks the id first', () => {
    expect(codeThrown(() => parseTaskSource('../x', source('')))).toBe('ERR_SCHEDULER_INVALID_ID')
  })

  it.each([
    ['version 2', 'version: 2\nprompt: x\n', 'version'],
    ['a missing version', 'prompt: x\n', 'version'],
    ['a string version', 'version: "1"\nprompt: x\n', 'version'],
    ['a missing prompt', 'version: 1\n', 'prompt'],
    ['an empty prompt', 'version: 1\nprompt: ""\n', 'prompt'],
    ['a list', '- version: 1\n', 'mapping'],
    ['a scalar', 'hello\n', 'mapping'],
    ['an empty file', '', 'mapping'],
  ])('refuses %s', (_, text, fragment) => {
    expect(problemOf(text)).toContain(fragment)
  })

  it('refuses an unknown key and names it', () => {
    const message = problemOf(source('tools: [bash]\n'))
    expect(message).toContain('unknown key')
    expect(message).toContain('"tools"')
  })

  it('shows unknown keys printable and short', () => {
    const message = problemOf(source(`"\u0007${'k'.repeat(100)}": 1\n`))
    expect(message).not.toContain('\u0007')
    expect(message.length).toBeLessThan(200)
  })

  it.each(['true', 'false', '[daily]'])(
    'refuses enabled: %s and points at scheduler.enabled and task resume',
    (value) => {
      const message = problemOf(source(`enabled: ${value}\n`))
      expect(message).toContain('scheduler.enabled')
      expect(message).toContain('task resume')
    },
  )

  it('refuses a file over 1 MiB (text and bytes) and accepts one just at the limit', () => {
    const head = 'version: 1\nprompt: x\n# '
    const exact = `${head}${'a'.repeat(MAX_TASK_SOURCE_BYTES - head.length - 1)}\n`
    expect(Buffer.byteLength(exact)).toBe(MAX_TASK_SOURCE_BYTES)
    expect(parseTaskSource('daily', exact).prompt).toBe('x')
    const over = `${exact}#`
    expect(problemOf(over)).toContain(`larger than ${MAX_TASK_SOURCE_BYTES} bytes`)
    expect(problemOf(Buffer.from(over))).toContain('larger than')
    // Multi-byte characters count as bytes, not characters.
    const wide = `${head}${'é'.repeat(MAX_TASK_SOURCE_BYTES / 2)}\n`
    expect(wide.length).toBeLessThan(MAX_TASK_SOURCE_BYTES)
    expect(problemOf(wide)).toContain('larger than')
  })

  it('refuses aliases and anchors', () => {
    expect(problemOf('version: 1\nprompt: &p Summarise\ndescription: *p\n')).toContain('aliases')
    expect(problemOf('base: &b {version: 1}\n<<: *b\nprompt: x\n')).toMatch(/not valid YAML|unknown key/)
  })

  it('refuses a billion-laughs document without expanding it', () => {
    const laughs = [
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'version: 1',
      'prompt: x',
    ].join('\n')
    expect(problemOf(laughs)).toContain('aliases')
  })

  it('refuses duplicate keys, naming the 1-based line of the second one', () => {
    expect(problemOf('version: 1\nprompt: a\nprompt: b\n')).toBe('not valid YAML (DUPLICATE_KEY at line 3)')
    expect(problemOf('prompt: a\nversion: 1\n\n\ndescription: x\nversion: 1\n')).toBe(
      'not valid YAML (DUPLICATE_KEY at line 6)',
    )
  })

  it.each([
    ['!shell x', 2],
    ['!!js/function "x"', 2],
    ['!!python/object:os.system x', 2],
    ['!<tag:example.com,2000:app/run> x', 2],
  ])('refuses the custom tag in `prompt: %s` with its line', (value, line) => {
    const message = problemOf(`version: 1\nprompt: ${value}\n`)
    expect(message).toBe(`not valid YAML (custom tags are not allowed at line ${line})`)
    expect(codeThrown(() => parseTaskSource('daily', `version: 1\nprompt: ${value}\n`))).toBe(
      'ERR_SCHEDULER_INVALID_TASK',
    )
  })

  it('names the line of a custom tag further down, in any field, and via a %TAG handle', () => {
    expect(problemOf('version: 1\ndescription: d\nprompt: !shell rm -rf /\n')).toBe(
      'not valid YAML (custom tags are not allowed at line 3)',
    )
    expect(problemOf('version: 1\nprompt: x\n\ndescription: !custom\n  text\n')).toBe(
      'not valid YAML (custom tags are not allowed at line 4)',
    )
    expect(problemOf('%TAG !e! tag:example.com,2000:\n---\nversion: 1\nprompt: !e!run x\n')).toBe(
      'not valid YAML (custom tags are not allowed at line 4)',
    )
    expect(problemOf('version: 1\nprompt: !shell\n  rm -rf /\n')).not.toContain('rm -rf')
  })

  it('still accepts the core tags that resolve to what the schema wants', () => {
    expect(parseTaskSource('daily', 'version: !!int 1\nprompt: !!str 42\n')).toMatchObject({
      version: 1,
      prompt: '42',
    })
  })

  // The core tags below are known to the parser and resolve to non-strings: the schema refuses them.
  it.each(['!!binary aGVsbG8=', '!!set {a: null}', '!!timestamp 2001-12-14', '!!map {a: 1}'])(
    'refuses a value tagged %s',
    (value) => {
      expect(problemOf(`version: 1\nprompt: ${value}\n`)).toMatch(/prompt|not valid YAML/)
    },
  )

  it('refuses several documents and broken YAML with a line number, never the prompt', () => {
    expect(problemOf('version: 1\nprompt: x\n---\nversion: 1\n')).toBe(
      'not valid YAML (MULTIPLE_DOCS at line 3)',
    )
    const message = problemOf('version: 1\nprompt: "secret-prompt-text\n')
    expect(message).toMatch(/^not valid YAML \(\w+ at line \d+\)$/)
    expect(message).not.toContain('secret-prompt-text')
  })

  it('refuses a prompt that is too long', () => {
    const long = 'x'.repeat(MAX_PROMPT_LENGTH + HOSTILE_CONTENT_GUIDANCE.length + 1)
    expect(problemOf(`version: 1\nprompt: ${long}\n`)).toContain('prompt')
    const fits = 'x'.repeat(MAX_PROMPT_LENGTH + HOSTILE_CONTENT_GUIDANCE.length)
    expect(parseTaskSource('daily', `version: 1\nprompt: ${fits}\n`).prompt).toHaveLength(fits.length)
  })

  describe('timeout', () => {
    it.each([
      ['90s', 90],
      ['10m', 600],
      ['1h30m', 5400],
      ['10s', 10],
      ['6h', 21600],
      ['360m', 21600],
      [90, 90],
      [21600, 21600],
    ] as const)('accepts %j', (value, seconds) => {
      const text = source(`timeout: ${typeof value === 'string' ? JSON.stringify(value) : value}\n`)
      expect(parseTaskSource('daily', text).timeoutSeconds).toBe(seconds)
    })

    it.each([
      '"9s"',
      '9',
      '0',
      '"6h1s"',
      '21601',
      '"7h"',
      '"1d"',
      '"ten minutes"',
      '1.5',
      '-30',
      'true',
      '[90]',
    ])('refuses %s', (value) => {
      expect(problemOf(source(`timeout: ${value}\n`))).toContain('timeout')
    })

    it('names the accepted range', () => {
      expect(problemOf(source('timeout: 5s\n'))).toContain('from 10s to 6h')
    })
  })

  describe('model', () => {
    it.each(['anthropic/claude-sonnet-4', 'openrouter/meta/llama-3', 'p/m'])('accepts %j', (model) => {
      expect(parseTaskSource('daily', source(`model: ${model}\n`)).model).toBe(model)
    })

    it.each(['claude', '/model', 'provider/', 'provider/ model', 'pro vider/model', '""'])(
      'refuses %j',
      (model) => {
        expect(problemOf(source(`model: ${model}\n`))).toContain('model')
      },
    )
  })

  describe('control characters', () => {
    it.each([
      ['NUL', '\u0000'],
      ['BEL', '\u0007'],
      ['a tab', '\t'],
      ['a line break', '\n'],
      ['a carriage return', '\r'],
      ['ESC', '\u001b'],
      ['DEL', '\u007f'],
      ['NEL (C1)', '\u0085'],
      ['CSI (C1)', '\u009b'],
    ])('a description with %s is refused', (_, char) => {
      const message = problemOf(source(`description: ${JSON.stringify(`Morning${char}summary`)}\n`))
      expect(message).toContain('description: must not contain control characters')
      expect(codeThrown(() => renderTaskSource({ version: 1, prompt: 'x', description: `a${char}b` }))).toBe(
        'ERR_SCHEDULER_INVALID_TASK',
      )
    })

    it('a description with printable non-ASCII text is accepted', () => {
      expect(parseTaskSource('daily', source('description: "Résumé ✓ 日本 — ok"\n')).description).toBe(
        'Résumé ✓ 日本 — ok',
      )
    })

    it.each([
      ['NUL', '\u0000'],
      ['BEL', '\u0007'],
      ['a vertical tab', '\u000b'],
      ['a form feed', '\u000c'],
      ['ESC (a terminal escape sequence)', '\u001b[2J'],
      ['DEL', '\u007f'],
      ['NEL (C1)', '\u0085'],
      ['CSI (C1)', '\u009b'],
    ])('a prompt with %s is refused', (_, chars) => {
      const message = problemOf(`version: 1\nprompt: ${JSON.stringify(`Summarise${chars} the notes.`)}\n`)
      expect(message).toContain('prompt: must not contain control characters other than line breaks and tabs')
      expect(codeThrown(() => renderTaskSource({ version: 1, prompt: `a${chars}b` }))).toBe(
        'ERR_SCHEDULER_INVALID_TASK',
      )
    })

    it('a prompt keeps line breaks (LF, CRLF) and tabs', () => {
      const prompt = 'Line one\r\nLine two\n\tindented\n'
      expect(parseTaskSource('daily', renderTaskSource({ version: 1, prompt })).prompt).toBe(prompt)
    })

    it.each([
      ['ESC', 'p/m\u001b[31m'],
      ['NUL', 'p/m\u0000'],
      ['DEL', 'p/m\u007f'],
      ['a C1 character', 'p\u0085/m'],
      ['a zero-width space (format)', 'p/m\u200b'],
      ['a right-to-left override (format)', 'p/\u202em'],
      ['a private-use character', 'p/m\ue000'],
    ])('a model with %s is refused', (_, model) => {
      expect(problemOf(source(`model: ${JSON.stringify(model)}\n`))).toContain(
        'model: must be "provider/model"',
      )
    })
  })

  it('refuses a bad schedule and a bad output with the field name', () => {
    expect(problemOf(source('schedule: "* * * * * *"\n'))).toContain('schedule: must be five cron fields')
    expect(problemOf(source('output: secrets/x.md\n'))).toContain(
      'output: must not be inside knowledge/secrets/',
    )
  })

  describe('output with the task id filled in', () => {
    it.each([
      ['secrets', '{id}/out.md', 'must not be inside knowledge/secrets/'],
      ['Secrets', '{id}/out.md', 'must not be inside knowledge/secrets/'],
      ['tasks', '{id}/{run}.md', 'must not be inside knowledge/tasks/'],
      ['task-history', '{id}/x.md', 'must not be inside knowledge/task-history/'],
      ['env', '{id}/x.txt', 'must not be inside knowledge/env/'],
      ['x.json', 'results/{id}', 'must not end in .yml, .yaml, .env or .json'],
      ['x.yml', 'results/{id}', 'must not end in .yml, .yaml, .env or .json'],
      ['a.env', '{date}-{id}', 'must not end in .yml, .yaml, .env or .json'],
    ])('refuses id %j with output %j for that id', (id, output, why) => {
      const text = source(`output: "${output}"\n`)
      expect(problemOf(text, id)).toBe(`output: with this task id it ${why}`)
      expect(codeThrown(() => parseTaskSource(id, text))).toBe('ERR_SCHEDULER_INVALID_TASK')
    })

    it('accepts the same output for an ordinary id', () => {
      expect(parseTaskSource('daily', source('output: "{id}/out.md"\n')).output).toBe('{id}/out.md')
      expect(parseTaskSource('x.md', source('output: "results/{id}"\n')).output).toBe('results/{id}')
      expect(parseTaskSource('secrets', source('output: "results/{id}.md"\n')).output).toBe('results/{id}.md')
    })

    it('property: a parsed output never expands to a path checkOutputPath refuses', () => {
      const ids = fc.oneof(
        fc.constantFrom('secrets', 'TASKS', 'env', 'disabled-tasks', 'x.json', 'a.YAML', 'b.env', 'c.yml'),
        fc.stringMatching(TASK_ID_PATTERN),
      )
      const outputs = fc.constantFrom(
        '{id}/out.md',
        'results/{id}',
        '{id}',
        'r/{id}/{run}.md',
        '{id}-{date}.txt',
      )
      fc.assert(
        fc.property(ids, outputs, (id, output) => {
          let task: ReturnType<typeof parseTaskSource>
          try {
            task = parseTaskSource(id, source(`output: "${output}"\n`))
          } catch (error) {
            expect(SchedulerError.isInstance(error) && error.code).toBe('ERR_SCHEDULER_INVALID_TASK')
            return
          }
          expect(checkOutputPath(expandOutputPath(task.output ?? '', id, new Date()))).toBeUndefined()
        }),
        { numRuns: 500 },
      )
    })
  })

  it('reports at most three issues', () => {
    const message = problemOf('version: 2\nprompt: ""\ntimeout: 1s\nmodel: x\noutput: /abs\n')
    expect(message.split('; ')).toHaveLength(3)
  })
})

describe('withGuidance', () => {
  it('prepends the guidance once', () => {
    const once = withGuidance('Do the thing.')
    expect(once).toBe(`${HOSTILE_CONTENT_GUIDANCE}Do the thing.`)
    expect(withGuidance(once)).toBe(once)
  })

  it('property: idempotent', () => {
    fc.assert(
      fc.property(fc.string(), (prompt) => {
        const once = withGuidance(prompt)
        expect(once.startsWith(HOSTILE_CONTENT_GUIDANCE)).toBe(true)
        expect(withGuidance(once)).toBe(once)
      }),
    )
  })
})

describe('renderTaskSource', () => {
  it('writes keys in a fixed order and leaves out absent ones', () => {
    const text = renderTaskSource({
      prompt: 'p',
      output: 'out/{id}.md',
      version: 1,
      schedule: '@daily',
      description: 'd',
      timeout: '10m',
    })
    const keys = text
      .split('\n')
      .filter((line) => /^\w+:/.test(line))
      .map((line) => line.split(':')[0])
    expect(keys).toEqual(['version', 'description', 'schedule', 'timeout', 'output', 'prompt'])
  })

  it('refuses what the schema refuses', () => {
    expect(codeThrown(() => renderTaskSource({ version: 1, prompt: '' }))).toBe('ERR_SCHEDULER_INVALID_TASK')
    expect(codeThrown(() => renderTaskSource({ version: 1, prompt: 'x', timeout: '1s' }))).toBe(
      'ERR_SCHEDULER_INVALID_TASK',
    )
    expect(codeThrown(() => renderTaskSource({ version: 1, prompt: 'x', enabled: true } as never))).toBe(
      'ERR_SCHEDULER_INVALID_TASK',
    )
  })

  it('property: render → parse round-trips every field', () => {
    const schedules = fc.constantFrom(undefined, '0 7 * * 1-5', '@hourly', '*/15 * * * *', '30 2 1 * *')
    const outputs = fc.constantFrom(undefined, 'reports/{id}/{run}.md', 'daily.md', 'a b/c-{date}.txt')
    // Control characters are refused (prompts keep line breaks and tabs): replaced, lengths kept.
    const prompts = fc
      .string({ unit: 'binary', minLength: 1, maxLength: 400 })
      .map((text) => text.replace(PROMPT_REFUSED_G, 'x'))
    const descriptions = fc
      .string({ unit: 'binary', maxLength: 100 })
      .map((text) => text.replace(CONTROL_G, 'x'))
    fc.assert(
      fc.property(
        prompts,
        fc.option(descriptions, { nil: undefined }),
        schedules,
        fc.option(fc.integer({ min: 10, max: 21_600 }), { nil: undefined }),
        outputs,
        (prompt, description, schedule, timeout, output) => {
          const text = renderTaskSource({ version: 1, prompt, description, schedule, timeout, output })
          const task = parseTaskSource('round-trip', text)
          expect(task.prompt).toBe(prompt)
          expect(task.description).toBe(description)
          expect(task.schedule).toBe(schedule)
          expect(task.output).toBe(output)
          expect(task.timeoutSeconds).toBe(timeout ?? DEFAULT_TIMEOUT_SECONDS)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('property: a prompt or description with a refused control character never renders', () => {
    const refusedInPrompt = fc
      .integer({ min: 0, max: 0x9f })
      .filter((code) => (code < 0x20 && ![9, 10, 13].includes(code)) || code >= 0x7f)
      .map((code) => String.fromCharCode(code))
    const control = fc
      .integer({ min: 0, max: 0x9f })
      .filter((code) => code < 0x20 || code >= 0x7f)
      .map((code) => String.fromCharCode(code))
    const text = fc.string({ maxLength: 50 })
    fc.assert(
      fc.property(text, refusedInPrompt, text, (before, bad, after) => {
        expect(codeThrown(() => renderTaskSource({ version: 1, prompt: `${before}${bad}${after}` }))).toBe(
          'ERR_SCHEDULER_INVALID_TASK',
        )
      }),
    )
    fc.assert(
      fc.property(text, control, text, (before, bad, after) => {
        expect(
          codeThrown(() =>
            renderTaskSource({ version: 1, prompt: 'x', description: `${before}${bad}${after}` }),
          ),
        ).toBe('ERR_SCHEDULER_INVALID_TASK')
      }),
    )
  })

  it('round-trips a prompt with YAML-looking content and the guidance', () => {
    const prompt = withGuidance('enabled: true\n---\n&a *a !!binary\n  indented\n# not a comment\n')
    expect(parseTaskSource('x', renderTaskSource({ version: 1, prompt })).prompt).toBe(prompt)
  })
})
