// Scaffolds the boilerplate of one workspace package (package.json, tsconfig, tsup, vitest).
// Usage: node scripts/new-package.mjs <name> "<description>" [--private]
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const [name, description = '', flag] = process.argv.slice(2)
if (!name) {
  console.error('usage: node scripts/new-package.mjs <name> "<description>" [--private]')
  process.exit(2)
}
const dir = join('packages', name)
mkdirSync(join(dir, 'src'), { recursive: true })
const isPrivate = flag === '--private'
const write = (file, text) => {
  const path = join(dir, file)
  if (!existsSync(path)) writeFileSync(path, text)
}
const pkg = {
  name: `@sallyport/${name}`,
  version: '0.1.0',
  description,
  ...(isPrivate ? { private: true } : {}),
  license: 'Apache-2.0',
  type: 'module',
  sideEffects: false,
  repository: { type: 'git', url: 'git+https://example.invalid/sallyport.git', directory: dir },
  engines: { node: '>=20.19' },
  exports: {
    '.': {
      types: './dist/index.d.ts',
      '@sallyport/source': './src/index.ts',
      import: './dist/index.js',
    },
    './package.json': './package.json',
  },
  files: ['dist'],
  scripts: {
    build: 'tsup',
    typecheck: 'tsc --noEmit -p tsconfig.json',
    lint: isPrivate ? 'echo private package: publint skipped' : 'publint --strict',
    test: 'vitest run',
  },
}
write('package.json', `${JSON.stringify(pkg, null, 2)}\n`)
write(
  'tsconfig.json',
  `${JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src', 'test', '*.ts'] }, null, 2)}\n`,
)
write(
  'tsup.config.ts',
  "import { defineConfig } from 'tsup'\nimport { packageBuild } from '../../tsup.base.ts'\n\nexport default defineConfig(packageBuild())\n",
)
write(
  'vitest.config.ts',
  "import { defineConfig, mergeConfig } from 'vitest/config'\nimport { sharedTestConfig } from '../../vitest.shared.ts'\n\nexport default mergeConfig(sharedTestConfig, defineConfig({}))\n",
)
write('src/index.ts', 'export {}\n')
console.log(`scaffolded ${dir}`)
