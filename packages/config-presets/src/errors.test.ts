import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'

// Every CLI command maps errors to exit codes through `@sallyport/config-presets/errors`:
// loading it must not load the presets, the readiness check or the runtime client. Each of them
// is a trap here; the last test proves the traps fire.
const { trap } = vi.hoisted(() => ({
  trap: (name: string) => () => {
    throw new Error(`the errors module loaded ${name}`)
  },
}))
vi.mock('@sallyport/upstream-client', trap('@sallyport/upstream-client'))
vi.mock('./validate.js', trap('./validate.js'))

const exported = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')).exports

describe('@sallyport/config-presets/errors', () => {
  it('is a subpath of the package: the built file, and its source for tests', () => {
    expect(exported['./errors']).toEqual({
      types: './dist/errors.d.ts',
      '@sallyport/source': './src/errors.ts',
      import: './dist/errors.js',
    })
  })

  it('loads alone: no presets, validation or runtime client', async () => {
    const { PresetError } = await import(
      join(import.meta.dirname, '..', exported['./errors']['@sallyport/source'])
    )
    const error = new PresetError('ERR_PRESET_NOT_FOUND', 'no preset local')
    expect(PresetError.isInstance(error)).toBe(true)
    expect(error.code).toBe('ERR_PRESET_NOT_FOUND')
  })

  it('(the traps fire: the root does load the runtime client and the validation)', async () => {
    // vitest wraps what a mock factory throws; the trap's own error is its cause.
    const failure = (loading: Promise<unknown>) =>
      loading.then(
        () => 'loaded',
        (error: Error) => `${error.message} / ${(error.cause as Error | undefined)?.message}`,
      )
    expect(await failure(import('./check.js'))).toMatch(/loaded @sallyport\/upstream-client/)
    expect(await failure(import('./models.js'))).toMatch(/loaded \.\/validate\.js/)
  })
})
