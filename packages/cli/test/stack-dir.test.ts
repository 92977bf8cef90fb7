import { describe, expect, it } from 'vitest'
import type { Io } from '../src/io.ts'
import { stackDir } from '../src/stack-dir.ts'

const io = (env: NodeJS.ProcessEnv): Io => ({ env, out: () => {}, err: () => {} })

describe('stackDir (one rule for every command)', () => {
  it('--dir wins, then $SALLYPORT_DIR, then the current directory', () => {
    expect(stackDir({ dir: '/a' }, io({ SALLYPORT_DIR: '/b' }))).toBe('/a')
    expect(stackDir({}, io({ SALLYPORT_DIR: '/b' }))).toBe('/b')
    expect(stackDir({ dir: '' }, io({ SALLYPORT_DIR: '/b' }))).toBe('/b')
    expect(stackDir({ dir: 42 }, io({}))).toBe('.')
    expect(stackDir({}, io({}))).toBe('.')
  })
})
