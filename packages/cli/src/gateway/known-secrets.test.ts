import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { knownSecretsOf } from './known-secrets.ts'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function stack() {
  const root = mkdtempSync(join(tmpdir(), 'sallyport-known-'))
  dirs.push(root)
  const authFile = join(root, 'auth.json')
  const userConfigDir = join(root, 'assistant')
  mkdirSync(userConfigDir)
  return { authFile, userConfigDir, prefs: join(userConfigDir, 'opencode.json') }
}

describe('knownSecretsOf', () => {
  it("knows the credential store's keys, the preferences' apiKey and header values, and the fixed ones", () => {
    const s = stack()
    writeFileSync(s.authFile, JSON.stringify({ corp: { type: 'api', key: 'corp-key-Q1w2E3' } }))
    writeFileSync(
      s.prefs,
      JSON.stringify({
        model: 'local/m',
        provider: {
          local: {
            options: {
              baseURL: 'http://x/v1',
              apiKey: 'hunter2Secret9Zx',
              headers: { 'X-Token': 'hdr-secret-77' },
            },
          },
        },
      }),
    )
    const secrets = knownSecretsOf({ ...s, fixed: ['native-password-value', 'short'] })()
    expect(secrets).toEqual(
      expect.arrayContaining([
        'corp-key-Q1w2E3',
        'hunter2Secret9Zx',
        'hdr-secret-77',
        'native-password-value',
      ]),
    )
    // Neither short values nor what is not a secret (the type, the base URL, the model).
    expect(secrets).not.toContain('short')
    expect(secrets).not.toContain('api')
    expect(secrets).not.toContain('http://x/v1')
    expect(secrets).not.toContain('local/m')
  })

  it('sees a key saved later within its recheck, and reads the files only when they changed', () => {
    const s = stack()
    let now = 0
    const secrets = knownSecretsOf({ ...s, now: () => now })
    expect(secrets()).toEqual([])
    writeFileSync(s.authFile, JSON.stringify({ corp: { type: 'api', key: 'rotated-key-0001' } }))
    expect(secrets()).toEqual([]) // within the second: the cached answer
    now += 1_000
    expect(secrets()).toEqual(['rotated-key-0001'])
  })

  it('never throws on unreadable or broken files', () => {
    const s = stack()
    writeFileSync(s.authFile, '{broken')
    writeFileSync(s.prefs, '[]')
    expect(knownSecretsOf(s)()).toEqual([])
  })
})
