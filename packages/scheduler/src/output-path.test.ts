import { isAbsolute, join, resolve, sep } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { checkOutputPath, DEFAULT_OUTPUT, expandOutputPath, RESERVED_KNOWLEDGE_DIRS } from './output-path.ts'

describe('checkOutputPath', () => {
  it.each([
    'result.md',
    'reports/daily.md',
    'task-results/{id}/{run}.md',
    'a/{date}/{time}.txt',
    'notes/{id}-{date}.md',
    'my secrets/x.md',
    'sub/secrets/x.md',
    'tasks-archive/x.md',
    'envelope.md',
    'x.yml.md',
    'a..b/c',
    DEFAULT_OUTPUT,
  ])('accepts %j', (path) => {
    expect(checkOutputPath(path)).toBeUndefined()
  })

  it.each(
    RESERVED_KNOWLEDGE_DIRS.flatMap((dir) => [dir, dir.toUpperCase(), dir[0]!.toUpperCase() + dir.slice(1)]),
  )('refuses the reserved directory %j', (dir) => {
    expect(checkOutputPath(`${dir}/out.md`)).toBe(`must not be inside knowledge/${dir.toLowerCase()}/`)
    expect(checkOutputPath(`${dir}/{id}/{run}.md`)).toContain('must not be inside knowledge/')
  })

  it.each(['/etc/passwd', '/tmp/x.md', '\\x.md', 'C:/x.md', 'c:x.md'])(
    'refuses the absolute path %j',
    (path) => {
      expect(checkOutputPath(path)).toBe('must be relative to the knowledge directory')
    },
  )

  it.each(['../x.md', 'a/../../x.md', 'a/..', '..', './x.md', 'a/./b.md', 'a//b.md', 'a/', ''])(
    'refuses %j: empty, . or .. segments',
    (path) => {
      expect(checkOutputPath(path)).toMatch(/must not (be empty|contain empty)/)
    },
  )

  it.each(['.hidden.md', 'a/.git/config', '.ssh/id_rsa', 'a/.b'])(
    'refuses the hidden segment in %j',
    (path) => {
      expect(checkOutputPath(path)).toBe('must not name hidden files or directories')
    },
  )

  it.each(['a\\b.md', 'a\\..\\b.md', 'a\u0000b.md', 'a\nb.md', 'a\tb.md', 'a\u007fb.md', 'a\rb'])(
    'refuses backslashes and control characters in %j',
    (path) => {
      expect(checkOutputPath(path)).toBe('must not contain control characters or backslashes')
    },
  )

  it.each(['{ID}/x.md', '{user}/x.md', '{}.md', '{id }.md', '{../}x.md'])(
    'refuses the unknown placeholder in %j',
    (path) => {
      expect(checkOutputPath(path)).toMatch(/^unknown placeholder \{/)
    },
  )

  it.each(['{id.md', 'id}.md', 'a/{date', '{{id}}.md'])('refuses unbalanced braces in %j', (path) => {
    expect(checkOutputPath(path)).toBeDefined()
  })

  it.each(['x.yml', 'x.yaml', 'a/b.YML', 'user.env', 'a/b.json', 'c.JSON', '{id}.yml'])(
    'refuses the extension of %j',
    (path) => {
      expect(checkOutputPath(path)).toBe('must not end in .yml, .yaml, .env or .json')
    },
  )

  it('property: an accepted template stays relative and inside the knowledge directory after expansion', () => {
    const segment = fc
      .array(
        fc.constantFrom(
          'a',
          'B',
          '1',
          '.',
          '-',
          '_',
          ' ',
          '{',
          '}',
          '{id}',
          '{date}',
          '{time}',
          '{run}',
          '..',
          '~',
          'é',
          '\\',
        ),
        {
          minLength: 1,
          maxLength: 6,
        },
      )
      .map((parts) => parts.join(''))
    const template = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/'))
    const id = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/)
    const when = fc.date({
      min: new Date('2000-01-01T00:00:00Z'),
      max: new Date('2099-12-31T23:59:59Z'),
      noInvalidDate: true,
    })
    const root = resolve('/knowledge')
    fc.assert(
      fc.property(template, id, when, (path, taskId, startedAt) => {
        if (checkOutputPath(path) !== undefined) return
        expect(isAbsolute(path)).toBe(false)
        const segments = path.split('/')
        expect(segments).not.toContain('..')
        expect(segments.some((s) => s.startsWith('.'))).toBe(false)
        expect((RESERVED_KNOWLEDGE_DIRS as readonly string[]).includes(segments[0]!.toLowerCase())).toBe(
          false,
        )
        const expanded = expandOutputPath(path, taskId, startedAt)
        expect(expanded).not.toMatch(/[{}]/)
        expect(expanded.split('/')).not.toContain('..')
        expect(resolve(root, expanded).startsWith(`${root}${sep}`)).toBe(true)
      }),
      { numRuns: 2000 },
    )
  })

  it('property: arbitrary strings never pass with a .. segment or as an absolute path', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (path) => {
        if (checkOutputPath(path) !== undefined) return
        expect(path.startsWith('/')).toBe(false)
        expect(path.split('/')).not.toContain('..')
        // biome-ignore lint/suspicious/noControlCharactersInRegex: checking that none passes
        expect(path).not.toMatch(/[\u0000-\u001f\u007f\\]/)
        expect(resolve('/k', path).startsWith('/k/')).toBe(true)
      }),
      { numRuns: 2000 },
    )
  })
})

describe('expandOutputPath', () => {
  const startedAt = new Date('2026-03-29T01:02:03.456Z')

  it('fills every placeholder from the id and the UTC start', () => {
    expect(expandOutputPath('r/{id}/{date}/{time}-{run}.md', 'daily', startedAt)).toBe(
      'r/daily/2026-03-29/010203-2026-03-29T010203Z.md',
    )
  })

  it('fills repeated placeholders and leaves other text alone', () => {
    expect(expandOutputPath('{id}/{id}-{date}-{date}.md', 'x', startedAt)).toBe(
      'x/x-2026-03-29-2026-03-29.md',
    )
    expect(expandOutputPath('plain/out.md', 'x', startedAt)).toBe('plain/out.md')
  })

  it('the default output is one file per run', () => {
    expect(expandOutputPath(DEFAULT_OUTPUT, 'daily', startedAt)).toBe(
      'task-results/daily/2026-03-29T010203Z.md',
    )
    expect(join('knowledge', expandOutputPath(DEFAULT_OUTPUT, 'daily', startedAt))).toBe(
      join('knowledge', 'task-results', 'daily', '2026-03-29T010203Z.md'),
    )
  })

  it('uses UTC whatever the host zone', () => {
    expect(expandOutputPath('{date}T{time}', 'x', new Date('2026-12-31T23:59:59.999Z'))).toBe(
      '2026-12-31T235959',
    )
  })
})
