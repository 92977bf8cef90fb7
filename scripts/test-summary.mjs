// Adds up the vitest JSON reports every package wrote and prints one closing line
// ("tests: N passed, N failed") so a CI reader sees the whole suite's count at once.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

let passed = 0
let failed = 0
let skipped = 0
const rows = []
let missing = 0
const onlyRan = process.argv.includes('--only-ran')
for (const name of readdirSync('packages').sort()) {
  const manifest = join('packages', name, 'package.json')
  if (!existsSync(manifest) || !JSON.parse(readFileSync(manifest, 'utf8')).scripts?.test) continue
  const file = join('packages', name, '.vitest-report.json')
  if (!existsSync(file)) {
    if (onlyRan) continue
    // A suite that did not run (a dependency failed to build, the run stopped) is a failure.
    missing++
    rows.push(`  ${name}: did not run (counted as failed)`)
    continue
  }
  const report = JSON.parse(readFileSync(file, 'utf8'))
  passed += report.numPassedTests
  failed += report.numFailedTests
  skipped += report.numPendingTests + (report.numTodoTests ?? 0)
  rows.push(`  ${name}: ${report.numPassedTests} passed, ${report.numFailedTests} failed`)
  // Name every failed test with the first line of its failure, so a reader of CI's last lines
  // (the only part some readers get) knows what broke without scrolling up.
  for (const file of report.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status !== 'failed') continue
      const where = file.name ? file.name.slice(file.name.indexOf(`packages/${name}/`)) : name
      const first = (test.failureMessages?.[0] ?? '').split('\n')[0].slice(0, 300)
      rows.push(`    FAILED ${where} > ${test.fullName ?? test.title}\n      ${first}`)
    }
  }
}
console.log(rows.join('\n'))
const notRun = missing ? `, ${missing} package${missing === 1 ? '' : 's'} did not run` : ''
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}${notRun}`)
if (failed > 0 || missing > 0 || passed === 0) process.exit(1)
