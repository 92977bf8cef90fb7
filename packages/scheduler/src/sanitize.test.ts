import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { sanitizeMessage } from './sanitize.ts'

describe('sanitizeMessage', () => {
  it.each([
    ['an OpenAI-style key', 'invalid key sk-proj-AbCdEf0123456789xyz', 'AbCdEf0123456789'],
    ['an Anthropic-style key', 'x-api-key sk-ant-api03-AAAABBBBCCCCDDDD', 'AAAABBBBCCCCDDDD'],
    ['a GitHub token', 'token ghp_0123456789abcdefABCDEF rejected', '0123456789abcdef'],
    ['a Slack token', 'xoxb-1234567890-abcdefghij failed', '1234567890'],
    ['a key= style value', 'using key_live_ZZZZYYYYXXXX', 'ZZZZYYYYXXXX'],
    ['a long opaque string', `got ${'Q'.repeat(20)}${'7'.repeat(20)} from provider`, 'QQQQQQQQQQ'],
  ])('removes %s', (_, text, secret) => {
    const out = sanitizeMessage(text)
    expect(out).not.toContain(secret)
    expect(out).toContain('<redacted>')
  })

  it.each(['Bearer abc.def-ghi_jkl', 'bearer 0123456789abcdef', 'Basic dXNlcjpwYXNzd29yZA=='])(
    'removes the credential of %j',
    (header) => {
      const out = sanitizeMessage(`401 with Authorization: ${header}`)
      expect(out).not.toContain(header.split(' ')[1]!)
      expect(out).toContain('<redacted>')
    },
  )

  it.each([
    '/home/alice/projects/secret-repo/.env',
    '/Users/alice/Library/key.json',
    'C:\\Users\\alice\\AppData\\token.txt',
    '/var/lib/sallyport/state/native-password',
  ])('removes the host path %j', (path) => {
    const out = sanitizeMessage(`ENOENT: no such file ${path} here`)
    expect(out).not.toContain('alice')
    expect(out).not.toContain(path)
    expect(out).toMatch(/<path>|<redacted>/)
    expect(out).toMatch(/^ENOENT: no such file /)
  })

  it('replaces a short host path with <path>', () => {
    expect(sanitizeMessage('cannot open /home/al/x.ts')).toBe('cannot open <path>')
    expect(sanitizeMessage('at C:\\Users\\al\\x.ts')).toBe('at <path>')
    expect(sanitizeMessage('ENOENT /srv/al/x.ts: gone')).toBe('ENOENT <path>: gone')
  })

  it.each([
    ['failed at /a/b/c.ts now', 'failed at <path> now'],
    ['open /home/al/x.ts failed: retry later', 'open <path> failed: retry later'],
    ['ENOENT /srv/x/y.json and /srv/x/z.json are gone', 'ENOENT <path> and <path> are gone'],
    ['C:\\Users\\al\\x.ts is locked by another process', '<path> is locked by another process'],
    ['see /tmp/x/ then retry', 'see <path> then retry'],
  ])('keeps the words after a path: %j', (text, expected) => {
    expect(sanitizeMessage(text)).toBe(expected)
  })

  it('property: a word after a host path survives', () => {
    const segment = fc.stringMatching(/^[a-z]{1,8}$/)
    const word = fc.stringMatching(/^[a-z]{1,12}$/)
    fc.assert(
      fc.property(fc.array(segment, { minLength: 2, maxLength: 5 }), word, (segments, after) => {
        // A long path is a 32+ character opaque run first: <redacted>; either way the word stays.
        expect(sanitizeMessage(`failed at /${segments.join('/')} ${after}`)).toMatch(
          new RegExp(`^failed at <(path|redacted)> ${after}$`),
        )
      }),
    )
  })

  // Directory names with spaces are part of the path; the words after the last name are not.
  it.each([
    ['at C:\\Program Files\\Acme Corp\\secret.txt', 'Acme'],
    ['ENOENT /Users/alice smith/Library/key.json', 'smith'],
    ["open '/home/bob/My Documents/x.ts' failed", 'Documents'],
  ])('removes every part of the host path with spaces in %j', (text, part) => {
    expect(sanitizeMessage(text)).not.toContain(part)
  })

  it.each(['ses_0123456789abcdefAB', 'msg_ABCDEFGH12345678', 'per_abcdefgh', 'que_ZYXWVUTS99'])(
    'removes the session id %j',
    (id) => {
      const out = sanitizeMessage(`session ${id} was aborted`)
      expect(out).not.toContain(id)
      expect(out).toContain('<id>')
    },
  )

  it('keeps an ordinary message readable', () => {
    expect(sanitizeMessage('Rate limit exceeded, retry in 20 seconds')).toBe(
      'Rate limit exceeded, retry in 20 seconds',
    )
  })

  it('one line: control characters become spaces, outer space trimmed', () => {
    expect(sanitizeMessage('  line one\nline two\r\n\tthree\u0000\u007f ')).toBe('line one line two three')
  })

  it('property: at most 300 characters, no control characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 2000 }), (text) => {
        const out = sanitizeMessage(text)
        expect(out.length).toBeLessThanOrEqual(300)
        // biome-ignore lint/suspicious/noControlCharactersInRegex: checking none is left
        expect(out).not.toMatch(/[\u0000-\u001f\u007f]/)
      }),
    )
  })

  it('property: a key-shaped token between words never survives', () => {
    const words = fc.string({ maxLength: 60 }).map((s) => s.replace(/[^a-z ,.!]/gi, ' '))
    const body = fc.stringMatching(/^[A-Za-z0-9]{12,40}$/)
    const prefix = fc.constantFrom(
      'sk-',
      'sk_',
      'pk-',
      'rk_',
      'api-',
      'token_',
      'ghp_',
      'gho_',
      'xoxb-',
      'Bearer ',
      'basic ',
    )
    fc.assert(
      fc.property(words, prefix, body, words, (before, lead, secret, after) => {
        const out = sanitizeMessage(`${before} ${lead}${secret} ${after}`.slice(0, 200))
        expect(out).not.toContain(secret)
      }),
    )
  })
})
