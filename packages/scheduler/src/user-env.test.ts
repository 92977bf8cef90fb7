import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeThrown, schedulerErrorOf, useTempDirs } from '../test/helpers.ts'
import { SchedulerError } from './errors.ts'
import { MAX_USER_ENV_BYTES, parseUserEnv, readUserEnv } from './user-env.ts'

const tempDir = useTempDirs('sp-env-')

function messageOf(text: string): string {
  try {
    parseUserEnv(text)
  } catch (error) {
    if (SchedulerError.isInstance(error) && error.code === 'ERR_SCHEDULER_CONFIG') return error.message
    throw error
  }
  throw new Error('expected the text to be refused')
}

describe('parseUserEnv', () => {
  it('reads names, comments, blank lines, export, quotes and escapes', () => {
    const env = parseUserEnv(
      [
        '# a comment',
        '',
        'PLAIN=value',
        '  INDENTED=no',
        'export EXPORTED=yes',
        "SINGLE='literal \\n $HOME # not a comment'",
        'DOUBLE="line1\\nline2 \\"quoted\\" back\\\\slash"',
        'TRAILING=value # comment',
        'HASH=a#b',
        'EMPTY=',
        'EQUALS=a=b=c',
        '_UNDER1=1',
        'lower_case=ok',
        'WINDOWS=crlf\r',
        '   # indented comment',
      ].join('\n'),
    )
    expect(Object.fromEntries(env)).toEqual({
      PLAIN: 'value',
      INDENTED: 'no',
      EXPORTED: 'yes',
      SINGLE: 'literal \\n $HOME # not a comment',
      DOUBLE: 'line1\nline2 "quoted" back\\slash',
      TRAILING: 'value',
      HASH: 'a#b',
      EMPTY: '',
      EQUALS: 'a=b=c',
      _UNDER1: '1',
      lower_case: 'ok',
      WINDOWS: 'crlf',
    })
  })

  it('a later line wins', () => {
    expect(parseUserEnv('A=1\nA=2').get('A')).toBe('2')
  })

  it.each([
    'PATH',
    'HOME',
    'SHELL',
    'USER',
    'LOGNAME',
    'IFS',
    'ENV',
    'BASH_ENV',
    'NODE_OPTIONS',
    'LD_PRELOAD',
    'LD_LIBRARY_PATH',
    'DYLD_INSERT_LIBRARIES',
    'OPENCODE_CONFIG',
    'OPENCODE_SERVER_PASSWORD',
    'SALLYPORT_STACK_DIR',
    'SALLYPORT_X1',
  ])('refuses %s and names the line and the variable, not the value', (name) => {
    const message = messageOf(`OK=1\n# c\nexport ${name}=hunter2-value`)
    expect(message).toBe(`user.env line 3: ${name} may not be set from user.env`)
    expect(message).not.toContain('hunter2')
  })

  it.each(['PATHX', 'MY_PATH', 'NODE_ENV', 'OPENCODEX', 'XSALLYPORT_A'])('allows %s', (name) => {
    expect(parseUserEnv(`${name}=1`).get(name)).toBe('1')
  })

  it.each([
    ['no equals sign', 'JUST_A_NAME'],
    ['a bad name', '1ABC=x'],
    ['a dash in the name', 'A-B=x'],
    ['a space before =', 'A =x'],
    ['a bare export', 'export'],
  ])('refuses a line with %s, naming the line only', (_, line) => {
    const message = messageOf(`GOOD=1\n${line} secretvalue`)
    expect(message).toBe('user.env line 2: expected NAME=value')
    expect(message).not.toContain('secretvalue')
  })

  it.each([`A='open`, 'A="open', 'A="', "A='"])(
    'refuses the unterminated quote in %j without the value',
    (line) => {
      const message = messageOf(`\n${line}`)
      expect(message).toBe('user.env line 2: unterminated quote')
    },
  )

  it('is ERR_SCHEDULER_CONFIG', () => {
    expect(codeThrown(() => parseUserEnv('bad line'))).toBe('ERR_SCHEDULER_CONFIG')
  })
})

describe('readUserEnv', () => {
  function envFile(text: string, mode = 0o600): string {
    const dir = join(tempDir(), 'knowledge', 'env')
    mkdirSync(dir, { recursive: true })
    const path = join(dir, 'user.env')
    writeFileSync(path, text, { mode })
    chmodSync(path, mode)
    return path
  }

  it('reads a private regular file', async () => {
    expect(Object.fromEntries(await readUserEnv(envFile('A=1\nB="2"\n')))).toEqual({ A: '1', B: '2' })
  })

  it('a missing file is ERR_SCHEDULER_NOT_FOUND', async () => {
    expect((await schedulerErrorOf(readUserEnv(join(tempDir(), 'user.env')))).code).toBe(
      'ERR_SCHEDULER_NOT_FOUND',
    )
  })

  it('refuses a symlink (even to a private file)', async () => {
    const target = envFile('A=1\n')
    const link = join(tempDir(), 'user.env')
    symlinkSync(target, link)
    const error = await schedulerErrorOf(readUserEnv(link))
    expect(error.code).toBe('ERR_SCHEDULER_IO')
    expect(error.message).toContain('symbolic link')
  })

  it.each([0o640, 0o604, 0o644, 0o660, 0o620, 0o602])('refuses mode %s', async (mode) => {
    const error = await schedulerErrorOf(readUserEnv(envFile('A=1\n', mode)))
    expect(error.code).toBe('ERR_SCHEDULER_IO')
    expect(error.message).toContain('chmod 600')
  })

  it('accepts 0400', async () => {
    expect((await readUserEnv(envFile('A=1\n', 0o400))).get('A')).toBe('1')
  })

  it(`refuses a file over ${MAX_USER_ENV_BYTES} bytes and accepts one at the limit`, async () => {
    const line = 'A=1\n'
    const exact = `${'#'.repeat(MAX_USER_ENV_BYTES - line.length - 1)}\n${line}`
    expect(exact.length).toBe(MAX_USER_ENV_BYTES)
    expect((await readUserEnv(envFile(exact))).get('A')).toBe('1')
    const error = await schedulerErrorOf(readUserEnv(envFile(`${exact}#`)))
    expect(error.code).toBe('ERR_SCHEDULER_IO')
    expect(error.message).toContain('larger than')
  })

  it('refuses a directory', async () => {
    const dir = join(tempDir(), 'user.env')
    mkdirSync(dir, { mode: 0o700 })
    expect((await schedulerErrorOf(readUserEnv(dir))).message).toContain('not a regular file')
  })

  it('passes parse errors on', async () => {
    expect((await schedulerErrorOf(readUserEnv(envFile('PATH=/evil\n')))).code).toBe('ERR_SCHEDULER_CONFIG')
  })
})
