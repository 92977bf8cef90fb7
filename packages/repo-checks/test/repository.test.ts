import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, join, posix } from 'node:path'
import { describe, expect, it } from 'vitest'

// The repository stands alone and carries one name. A fresh clone must pass its tests with
// nothing beside it (a test that read a folder next to the checkout failed on every clean clone),
// and the first name of the project belongs to another package on npm: a user who typed it would
// run someone else's code.

const ROOT = join(import.meta.dirname, '..', '..', '..')

/** The tracked files (git), or every file outside node_modules, dist and .git without git. */
function trackedFiles(): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 })
      .split('\0')
      .filter((file) => file !== '')
  } catch {
    const files: string[] = []
    const walk = (dir: string): void => {
      for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        if (['node_modules', 'dist', '.git', '.turbo'].includes(entry.name)) continue
        const path = dir === '' ? entry.name : `${dir}/${entry.name}`
        if (entry.isDirectory()) walk(path)
        else if (entry.isFile()) files.push(path)
      }
    }
    walk('')
    return files
  }
}

const FILES = trackedFiles().filter((file) => {
  try {
    return statSync(join(ROOT, file)).isFile()
  } catch {
    return false // deleted in the work tree, not yet in the index
  }
})
const text = (file: string): string => readFileSync(join(ROOT, file), 'utf8')

// Spelled in parts, so this file does not hold what it looks for.
const OLD_NAME = new RegExp(['agent', 'gate'].join(''), 'i')
const SHARED = ['..', 'shared'].join('/')

describe('one name', () => {
  it('sees the repository (the check cannot pass on an empty list)', () => {
    expect(FILES.length).toBeGreaterThan(100)
    expect(FILES).toContain('package.json')
  })

  it('no tracked file names the old name, in its path or its text (CHANGELOGs excepted)', () => {
    const hits = FILES.filter((file) => basename(file) !== 'CHANGELOG.md').flatMap((file) => {
      const found: string[] = []
      if (OLD_NAME.test(file)) found.push(`${file} (path)`)
      text(file)
        .split('\n')
        .forEach((line, i) => {
          if (OLD_NAME.test(line)) found.push(`${file}:${i + 1}`)
        })
      return found
    })
    expect(hits).toEqual([])
  })

  it('the CLI is the unscoped package and binary sallyport; every other package is @sallyport/', () => {
    const manifests = FILES.filter((file) => /^packages\/[^/]+\/package\.json$/.test(file))
    expect(manifests.length).toBeGreaterThan(5)
    for (const file of manifests) {
      const manifest = JSON.parse(text(file)) as { name: string; bin?: Record<string, string> }
      if (file === 'packages/cli/package.json') {
        expect(manifest.name).toBe('sallyport')
        expect(Object.keys(manifest.bin ?? {})).toEqual(['sallyport'])
      } else {
        expect(manifest.name, file).toMatch(/^@sallyport\/[a-z-]+$/)
      }
    }
  })
})

describe('the repository stands alone', () => {
  it(`no tracked file refers to ${SHARED}`, () => {
    const hits = FILES.filter((file) => text(file).includes(SHARED))
    expect(hits).toEqual([])
  })

  it('no path built from a file’s own location climbs above the repository root', () => {
    // This file's own examples below are data, not paths it reads.
    const self = 'packages/repo-checks/test/repository.test.ts'
    const code = FILES.filter(
      (file) => file !== self && (/\.(?:[cm]?[jt]s|sh)$/.test(file) || file.startsWith('.ci/')),
    )
    expect(code.flatMap((file) => climbsOut(file, text(file)))).toEqual([])
  })

  it.each([
    ['packages/x/src/a.ts', "join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'f.json')", 1],
    ['packages/x/src/a.ts', "resolve(__dirname, '../../../../etc')", 1],
    ['packages/x/src/a.ts', "new URL('../../../../x.json', import.meta.url)", 1],
    ['scripts/a.sh', 'cd "$(dirname "$0")/../.."', 1],
    ['packages/x/src/a.ts', "join(import.meta.dirname, '..', 'test', 'fixtures')", 0],
    ['packages/x/src/a.ts', "new URL('../data.json', import.meta.url)", 0],
    ['.ci/run', 'cd "$(dirname "$0")/.."', 0],
  ])('the climb check on %s: %s → %i finding(s)', (file, source, count) => {
    expect(climbsOut(file, source)).toHaveLength(count)
  })
})

/**
 * Paths a file builds from its own location — `join(import.meta.dirname, '..', …)`,
 * `resolve(__dirname, '../..')`, `new URL('../x', import.meta.url)`, `$(dirname "$0")/../..` —
 * that, resolved from the file's folder, end above the repository root. (Traversal payloads in
 * tests are data, not paths to read, and are not looked at.)
 */
function climbsOut(file: string, source: string): string[] {
  const here = posix.dirname(file)
  const climbs: string[] = []
  for (const m of source.matchAll(/(?:import\.meta\.dirname|__dirname)\s*,\s*((?:['"][^'"]*['"]\s*,?\s*)+)/g))
    climbs.push([...(m[1] ?? '').matchAll(/['"]([^'"]*)['"]/g)].map((part) => part[1] as string).join('/'))
  // A URL relative to the module resolves against the module's folder.
  for (const m of source.matchAll(/new URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g))
    climbs.push(m[1] as string)
  for (const m of source.matchAll(/dirname "?\$0"?\)"?\/((?:\.\.\/?)+)/g)) climbs.push(m[1] as string)
  return climbs
    .filter((climb) => {
      const target = posix.normalize(posix.join(here, climb))
      return target === '..' || target.startsWith('../')
    })
    .map((climb) => `${file}: ${climb}`)
}
