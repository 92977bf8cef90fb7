import { newMessageId } from '@sallyport/upstream-client'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createRedactor, OUTSIDE_WORKSPACE, REDACTED_ID, redactIds } from './redact.js'

const ROOT = '/srv/stack/workspace'
// The runtime may report the canonical path of a symlinked root instead.
const REAL = '/mnt/data/workspace'
const redactor = createRedactor({ workspaceRoot: ROOT, realpath: () => REAL })
const ID = 'ses_1a2b3c4d5e6fABCDEFGHIJKLMN'
const OUT = OUTSIDE_WORKSPACE

describe('createRedactor: the workspace root', () => {
  it.each([
    [`${ROOT}/src/a.ts`, 'src/a.ts'],
    [ROOT, '.'],
    [`${ROOT}/`, '.'],
    [`${ROOT}/*`, '*'],
    [`${ROOT}/src/**/*.ts`, 'src/**/*.ts'],
    [`cat ${ROOT}/src/a.ts`, 'cat src/a.ts'],
    [`'${ROOT}/x.ts'`, "'x.ts'"],
    [`{"file":"${ROOT}/x.ts"}`, '{"file":"x.ts"}'],
    [`${ROOT}/src/a.ts:12:5`, 'src/a.ts:12:5'],
    [`worked in ${ROOT}.`, 'worked in ..'],
    [`worked in ${ROOT}!`, 'worked in .!'],
    [`(${ROOT}/a) [${ROOT}/b]`, '(a) [b]'],
    [`--dir=${ROOT}/src`, '--dir=src'],
    [`\`${ROOT}/src/a.ts\``, '`src/a.ts`'],
    [`${ROOT}/src/a.ts.`, 'src/a.ts.'],
    [`${ROOT}/my file.ts`, 'my file.ts'],
    [`${ROOT}//etc/passwd`, 'etc/passwd'],
    [`${ROOT}/a//${ROOT}/b`, `a//${ROOT}/b`],
    [`${ROOT}//`, '.'],
    [`file://${ROOT}/src/a.ts`, 'file:src/a.ts'],
    [`/${ROOT}/a.ts`, 'a.ts'],
    [`//${ROOT}/src/${ROOT}/a.ts`, `src/${ROOT}/a.ts`],
    [`-I${ROOT}/include -L${ROOT}`, '-Iinclude -L.'],
    [`${REAL}/src/b.ts`, 'src/b.ts'],
    // Relative to `/`, as the runtime reports paths outside a git repository (review finding).
    [`${ROOT.slice(1)}/new1.txt`, 'new1.txt'],
    [`"${ROOT.slice(1)}"`, '"."'],
    [`patterns: ${ROOT.slice(1)}/*`, 'patterns: *'],
    [`${REAL.slice(1)}/s7/deep/c.txt`, 's7/deep/c.txt'],
    [`x/${ROOT.slice(1)}/a`, `x/${ROOT.slice(1)}/a`],
    // After an escaped line break in quoted JSON.
    [`["ok"]\\n${ROOT}/hard.txt`, '["ok"]\\nhard.txt'],
    [REAL, '.'],
    [`${ROOT}/a and ${REAL}/b`, 'a and b'],
  ])('rewrites %j to %j', (input, output) => {
    expect(redactor.text(input)).toBe(output)
  })

  it.each([
    [`${ROOT}-old/src/b.ts`, OUT],
    [`${ROOT}2`, OUT],
    [`${ROOT}.bak/x`, OUT],
    [`${ROOT}?x`, OUT],
    ['/srv/stack', OUT],
    ['/srv/stack/', OUT],
    [`/x${ROOT}/a.ts`, OUT],
    [`${ROOT}https://${ROOT}/x`, `${OUT}:x`],
  ])('treats %j, which only resembles the root, as outside', (input, output) => {
    expect(redactor.text(input)).toBe(output)
  })

  it('leaves a root that only ends a relative path alone (it is not the root)', () => {
    expect(redactor.text(`x${ROOT}/a.ts`)).toBe(`x${ROOT}/a.ts`)
    const work = createRedactor({ workspaceRoot: '/work', realpath: (p) => p })
    expect(work.text('src/work/queue.ts, homework/work and /work/src/a.ts')).toBe(
      'src/work/queue.ts, homework/work and src/a.ts',
    )
  })

  it('normalises the configured root once (trailing slash, dot segments)', () => {
    const r = createRedactor({ workspaceRoot: '/srv/stack/./workspace//', realpath: (p) => p })
    expect(r.text(`${ROOT}/src/a.ts`)).toBe('src/a.ts')
  })

  it('keeps the configured root when the realpath cannot be resolved', () => {
    const r = createRedactor({
      workspaceRoot: ROOT,
      realpath: () => {
        throw new Error('ENOENT')
      },
    })
    expect(r.text(`${ROOT}/src/a.ts and ${REAL}/src/a.ts`)).toBe(`src/a.ts and ${OUT}`)
  })

  it('matches a root with spaces and regex characters literally', () => {
    const r = createRedactor({ workspaceRoot: '/srv/my (work) space+1', realpath: (p) => p })
    expect(r.text('see /srv/my (work) space+1/a.ts')).toBe('see a.ts')
    expect(r.text('see /srv/my XworkX space+1/a.ts')).toBe(`see ${OUT} XworkX space+1/a.ts`)
  })

  it('resolves the realpath with the filesystem by default', () => {
    const cwd = process.cwd()
    const r = createRedactor({ workspaceRoot: cwd })
    expect(r.text(`${cwd}/src/redact.ts`)).toBe('src/redact.ts')
  })

  it.each([['relative/path'], [''], ['/srv/\0x'], [42]])(
    'refuses workspaceRoot %j with a TypeError that does not repeat it',
    (root) => {
      expect(() => createRedactor({ workspaceRoot: root as string })).toThrow(
        new TypeError('workspaceRoot must be an absolute path'),
      )
    },
  )

  it('with no root, or the root /, counts every absolute path as outside', () => {
    for (const r of [createRedactor(), createRedactor({ workspaceRoot: '/', realpath: (p) => p })]) {
      expect(r.text(`${ROOT}/src/a.ts`)).toBe(OUT)
      expect(r.text('/tmp')).toBe('/tmp')
      expect(r.text('and/or')).toBe('and/or')
    }
  })
})

describe('createRedactor: a one-component root', () => {
  const work = createRedactor({ workspaceRoot: '/work', realpath: () => '/work' })
  it.each([
    ['I finished the work.', 'I finished the work.'],
    ['work/src/a.ts', 'work/src/a.ts'],
    ['/work/src/a.ts', 'src/a.ts'],
  ])('%s → %s', (input, expected) => {
    expect(work.text(input)).toBe(expected)
  })
})

describe('createRedactor: other absolute paths', () => {
  it.each([
    ['/etc/passwd', OUT],
    ['see /home/alice/.ssh/id_rsa.', `see ${OUT}.`],
    ['is it /etc/hosts?', `is it ${OUT}?`],
    ['ls /srv/other/*', `ls ${OUT}`],
    ['PATH=/usr/bin:/bin', `PATH=${OUT}:/bin`],
    ['host:/srv/backup/x', `host:${OUT}`],
    ['//server/share/x', OUT],
    ['/var//lib/x', OUT],
    ["open '/var/lib/app/db.sqlite'", `open '${OUT}'`],
    ['"/opt/tools/bin/x"', `"${OUT}"`],
    ['/Users/jöhn/Library/x', OUT],
    ['-I/usr/include/x', `-I${OUT}`],
    ['gcc -L/opt/lib/x', `gcc -L${OUT}`],
    ['x-I/usr/include/x', 'x-I/usr/include/x'],
  ])('rewrites %j to %j', (input, output) => {
    expect(redactor.text(input)).toBe(output)
  })

  it.each([
    ['/tmp'],
    ['/tmp/'],
    ['/work'],
    ['and/or'],
    ['w/o'],
    ['src/a.ts'],
    ['./src/a.ts'],
    ['../lib/x.ts'],
    ['~/notes/todo.md'],
    ['$HOME/x/y'],
    ['1/2/3'],
    ['a.b/c/d'],
    ['https://example.com/a/b'],
    [`see https://example.com${ROOT}/x and http://localhost:8080/a/b`],
    ['git+ssh://host/repo/x.git'],
    ['[x](https://e.com/a/b)'],
    ['a / b / c'],
    ['1 / 2'],
    ['//'],
    ['a//b/c'],
    ['/'.repeat(5)],
    ['/'],
  ])('leaves %j as it is', (input) => {
    expect(redactor.text(input)).toBe(input)
  })
})

describe('createRedactor: upstream ids', () => {
  it.each([
    [ID, REDACTED_ID],
    ...['msg', 'prt', 'per', 'que', 'tool', 'usr', 'pty', 'wrk', 'job', 'evt'].map(
      (prefix) => [`${prefix}_0123456789abZyXwVuTsRqPoNm`, REDACTED_ID] as [string, string],
    ),
    [`<task id="${ID}">done</task>`, `<task id="${REDACTED_ID}">done</task>`],
    [`task_id: ${ID} (for resuming)`, `task_id: ${REDACTED_ID} (for resuming)`],
    [`https://opncd.ai/s/${ID}`, `https://opncd.ai/s/${REDACTED_ID}`],
    [`x_${ID}`, `x_${REDACTED_ID}`],
    [`${ID}abc`, `${REDACTED_ID}abc`],
    [`msg_0123456789abZyXwVuTsRqPoNmprt_0123456789abZyXwVuTsRqPoNm`, `${REDACTED_ID}${REDACTED_ID}`],
    [`${ROOT}/.cache/${ID}.json`, `.cache/${REDACTED_ID}.json`],
    [`/var/cache/${ID}.json`, `${OUT}${REDACTED_ID}.json`],
    [`${ID}${ROOT}/a.ts`, `${REDACTED_ID}a.ts`],
  ])('rewrites %j to %j', (input, output) => {
    expect(redactor.text(input)).toBe(output)
  })

  it.each([
    ['ses_short'],
    ['msg_1a2b3c4d5e6'],
    ['msg_zzzzzzzzzzzzABCDEFGHIJKLMN'],
    ['msg_1a2b3c4d5e6fABCDEFGHIJKL'],
    ['session_1a2b3c4d5e6fABCDEFGHIJKLM'],
    ['message_count process_id tool_use the session ses_ is'],
    ['call_0123456789abZyXwVuTsRqPoNm'],
    ['Ses: 1a2b3c4d5e6fABCDEFGHIJKLMN'],
  ])('leaves %j as it is', (input) => {
    expect(redactor.text(input)).toBe(input)
  })

  it('rewrites every id the runtime mints, wherever it sits in the text', () => {
    const prefix = fc.constantFrom('ses', 'msg', 'prt', 'per', 'que', 'tool')
    const minted = fc
      .tuple(prefix, fc.integer({ min: 0, max: 2 ** 40 }))
      .map(([p, t]) => newMessageId(() => t).replace(/^msg/, p))
    fc.assert(
      fc.property(fc.string(), minted, fc.string(), (before, id, after) => {
        const out = redactor.text(`${before}${id}${after}`)
        expect(out).not.toContain(id)
        expect(out).not.toMatch(/(?:ses|msg|prt|per|que|tool)_[0-9a-f]{12}[0-9A-Za-z]{14}/)
      }),
      { numRuns: 500 },
    )
  })
})

describe('createRedactor: properties', () => {
  const texty = fc.oneof(
    fc.string(),
    fc
      .array(
        fc.constantFrom(
          ROOT,
          REAL,
          '/',
          'a',
          '.',
          ' ',
          'ses_',
          '0123456789ab',
          'ZyXwVuTsRqPoNm',
          ':',
          '~',
          'https://',
          '"',
        ),
      )
      .map((parts) => parts.join('')),
  )

  it('is idempotent, but for a relative path that spells the root (a second pass shortens it)', () => {
    const bare = new RegExp(`(?<![\\p{L}\\p{N}_.~/])(?:${ROOT.slice(1)}|${REAL.slice(1)})`, 'u')
    fc.assert(
      fc.property(texty, (text) => {
        const once = redactor.text(text)
        fc.pre(!bare.test(once))
        expect(redactor.text(once)).toBe(once)
      }),
      { numRuns: 2000 },
    )
  })

  it('never lets the root or its realpath through where a path could start, outside a URL', () => {
    // A workspace-relative path may spell the root's characters (`srv/stack/workspace/…` under the
    // root), but never as an absolute path: not at the start, nor after a separator.
    const absolute = (root: string) =>
      new RegExp(`(?<![\\p{L}\\p{N}_.~/])\\/*${root.replaceAll('/', '\\/')}`, 'u')
    fc.assert(
      fc.property(texty, (text) => {
        const out = redactor.text(text)
        if (!out.includes('://')) {
          expect(out).not.toMatch(absolute(ROOT))
          expect(out).not.toMatch(absolute(REAL))
        }
      }),
      { numRuns: 2000 },
    )
  })

  it('leaves text without a slash or an id prefix unchanged', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes('/') && !s.includes('_')),
        (text) => {
          expect(redactor.text(text)).toBe(text)
        },
      ),
      { numRuns: 1000 },
    )
  })

  it('runs in linear time on hostile input', () => {
    const hostile = [
      '/a'.repeat(100_000),
      'a/'.repeat(100_000),
      '/'.repeat(200_000),
      `${ROOT}${'.'.repeat(100_000)}x`,
      'ses_0123456789ab'.repeat(20_000),
      `http${'s'.repeat(200_000)}`,
      `${'a'.repeat(200_000)}://`,
    ]
    const started = performance.now()
    for (const text of hostile) redactor.text(text)
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})

describe('createRedactor: excerpt', () => {
  it('rewrites first, then cuts, so a cut never leaves part of an id or path behind', () => {
    const text = `${'x'.repeat(490)} ${ID} ${ROOT}/src/a.ts`
    const out = redactor.excerpt(text, 500)
    const rewritten = `${'x'.repeat(490)} ${REDACTED_ID} src/a.ts`
    expect(out).toBe(`${rewritten.slice(0, 499)}…`)
    expect(out).toHaveLength(500)
    expect(out).not.toContain('ses_')
  })

  it('keeps text that fits as it is (rewritten)', () => {
    expect(redactor.excerpt(`${ROOT}/a.ts`, 500)).toBe('a.ts')
    expect(redactor.excerpt('abc', 3)).toBe('abc')
    expect(redactor.excerpt('abcd', 3)).toBe('ab…')
  })
})

describe('redactIds: ids only (the runtime log lines that up passes on)', () => {
  it('replaces every id and leaves paths alone', () => {
    const line = `INFO service=session session.id=${ID} messageID=msg_0123456789abABCDEFGHIJKLMN path=/srv/stack/x`
    expect(redactIds(line)).toBe(
      `INFO service=session session.id=${REDACTED_ID} messageID=${REDACTED_ID} path=/srv/stack/x`,
    )
  })
})

describe('createRedactor: known secrets', () => {
  it('removes every occurrence of a known secret, whatever its shape, asking for them on each rewrite', () => {
    let secrets: string[] = ['hunter2Secret']
    const redactor = createRedactor({ workspaceRoot: '/work', knownSecrets: () => secrets })
    expect(redactor.text('rejected "hunter2Secret" twice: hunter2Secret')).toBe(
      'rejected "[redacted]" twice: [redacted]',
    )
    secrets = ['rotated-key-1']
    expect(redactor.text('old hunter2Secret, new rotated-key-1')).toBe('old hunter2Secret, new [redacted]')
    // Too short to match without hitting words.
    secrets = ['abc']
    expect(redactor.text('abc abc')).toBe('abc abc')
  })
})
