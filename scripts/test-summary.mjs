// Adds up the vitest JSON reports every package wrote and prints one closing line
// ("tests: N passed, N failed") so a CI reader sees the whole suite's count at once.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

let passed = 0
let failed = 0
let skipped = 0
const rows = []
for (const name of readdirSync('packages')) {
  const file = join('packages', name, '.vitest-report.json')
  if (!existsSync(file)) continue
  const report = JSON.parse(readFileSync(file, 'utf8'))
  passed += report.numPassedTests
  failed += report.numFailedTests
  skipped += report.numPendingTests + (report.numTodoTests ?? 0)
  rows.push(`  ${name}: ${report.numPassedTests} passed, ${report.numFailedTests} failed`)
}
console.log(rows.join('\n'))
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
if (failed > 0 || passed === 0) process.exit(1)
