import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { type RuntimeHandle, startRuntime } from '@sallyport/testkit'
import { createUpstreamClient } from '@sallyport/upstream-client'
import { afterEach, describe, expect, it } from 'vitest'
import { createPresets } from '../src/index.js'

// The hosted configuration contract, on the real runtime: the user's config directory is
// read-only and holds one writable preferences file (as `config/assistant/` of a stack; the
// runtime runs as another user when the tests run as root). A preset is saved in that file, in
// place: no other file appears, and comments survive in opencode.jsonc. In opencode.json the
// runtime drops them (measured; the CLI refuses to change such a file): if an upgrade changes
// either behaviour, this test says so.

const runtimes: RuntimeHandle[] = []
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.stop()
})

const COMMENTED = `// My preferences: keep these comments.
{
  /* block comment */
  "$schema": "https://opencode.ai/config.json", // trailing
  "share": "disabled"
}
`

async function saveInto(name: 'opencode.json' | 'opencode.jsonc') {
  const runtime = await startRuntime({ preferences: { name, text: COMMENTED } })
  runtimes.push(runtime)
  const dir = join(runtime.sandbox.configHome, 'opencode')
  const before = readdirSync(dir).sort()
  const client = createUpstreamClient({
    baseUrl: runtime.url,
    username: runtime.username,
    password: runtime.password,
    directory: runtime.directory,
  })
  try {
    const result = await createPresets({ runtime: client }).save({
      id: 'local',
      name: 'llama.cpp',
      baseUrl: 'http://10.0.0.5:8080/v1',
      model: 'qwen2.5-coder:7b',
    })
    return { result, dir, before, text: readFileSync(join(dir, name), 'utf8') }
  } finally {
    client.close()
  }
}

describe('the preferences file, on the real runtime', () => {
  it('opencode.jsonc in a read-only directory: edited in place, comments kept, nothing else written', async () => {
    const { result, dir, before, text } = await saveInto('opencode.jsonc')
    expect(result.confirmation.status).not.toBe('unconfirmed')
    expect(readdirSync(dir).sort()).toEqual(before)
    expect(text).toContain('// My preferences: keep these comments.')
    expect(text).toContain('/* block comment */')
    expect(text).toContain('// trailing')
    expect(text).toContain('"baseURL": "http://10.0.0.5:8080/v1"')
    expect(text).toContain('"share": "disabled"')
    // The directory is read-only to the runtime's user (another owner, no group or other write;
    // or, run as this user, no write bit at all): the file is the only thing it could write.
    const info = statSync(dir)
    const user = runtimes[0]?.user
    if (user) expect([info.uid !== user.uid, info.mode & 0o022]).toEqual([true, 0])
    else expect(info.mode & 0o222).toBe(0)
  }, 120_000)

  it('opencode.json: edited in place too, but rewritten as plain JSON (its comments are lost)', async () => {
    const { dir, before, text } = await saveInto('opencode.json')
    expect(readdirSync(dir).sort()).toEqual(before)
    expect(text).toContain('"baseURL": "http://10.0.0.5:8080/v1"')
    expect(text).not.toContain('// My preferences')
    expect(() => JSON.parse(text)).not.toThrow()
  }, 120_000)
})
