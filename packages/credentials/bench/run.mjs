// Benchmark of key resolution with the spec's maximum of 128 credentials, against a baseline
// measured in the same run: one raw SHA-256 + timingSafeEqual. Run after `npx tsup`:
//   node bench/run.mjs
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildKeyIndex, createCredentialStore, createKeyResolver, MAX_CREDENTIALS } from '../dist/index.js'

const ITERATIONS = 20_000
const BATCH = 100

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

function summarise(samplesNs) {
  const sorted = Float64Array.from(samplesNs).sort()
  return { median: percentile(sorted, 50) / 1000, p99: percentile(sorted, 99) / 1000 }
}

const us = (value) => (value >= 10 ? value.toFixed(0) : value.toFixed(2))

async function timeAsync(fn) {
  for (let i = 0; i < 2_000; i++) await fn() // warm-up
  globalThis.gc?.()
  const samples = new Float64Array(ITERATIONS)
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint()
    await fn()
    samples[i] = Number(process.hrtime.bigint() - start)
  }
  return summarise(samples)
}

function timeSync(fn) {
  for (let i = 0; i < 2_000; i++) fn()
  globalThis.gc?.()
  const samples = new Float64Array(ITERATIONS)
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint()
    fn()
    samples[i] = Number(process.hrtime.bigint() - start)
  }
  return summarise(samples)
}

/** Sub-microsecond work is timed in batches (timer overhead would dominate a single call). */
function timeSyncBatched(fn) {
  for (let i = 0; i < 20_000; i++) fn()
  globalThis.gc?.()
  const samples = new Float64Array(ITERATIONS / 10)
  for (let i = 0; i < samples.length; i++) {
    const start = process.hrtime.bigint()
    for (let j = 0; j < BATCH; j++) fn()
    samples[i] = Number(process.hrtime.bigint() - start) / BATCH
  }
  return summarise(samples)
}

const dir = await mkdtemp(join(tmpdir(), 'sallyport-credentials-bench-'))
try {
  const stateDir = join(dir, 'state')
  const store = createCredentialStore({ stateDir })
  const keys = []
  const addNs = []
  for (let n = 0; n < MAX_CREDENTIALS; n++) {
    const start = process.hrtime.bigint()
    keys.push((await store.add(`user${n}`, n % 3 === 0 ? 'full' : 'chat')).key)
    addNs.push(Number(process.hrtime.bigint() - start))
  }
  const resolver = createKeyResolver({ stateDir })
  const first = keys[0]
  const last = keys[keys.length - 1]
  const unknown = `agk_${randomBytes(32).toString('base64url')}`
  for (const key of [first, last]) {
    if (!(await resolver.resolve(key)).ok) throw new Error('benchmark set-up failed: key does not resolve')
  }

  const validFirst = await timeAsync(() => resolver.resolve(first))
  const validLast = await timeAsync(() => resolver.resolve(last))
  const miss = await timeAsync(() => resolver.resolve(unknown))
  resolver.close()

  const index = buildKeyIndex(
    keys.map((key, n) => ({ username: `user${n}`, identity: 'id_x', policy: 'chat', key })),
  )
  const core = timeSync(() => index.match(last))

  const configured = createHash('sha256').update(last).digest()
  const baseline = timeSyncBatched(() =>
    timingSafeEqual(createHash('sha256').update(last).digest(), configured),
  )

  const add = summarise(addNs)
  console.log(
    `credentials: resolve with ${MAX_CREDENTIALS} keys median ${us(validLast.median)} µs, p99 ${us(validLast.p99)} µs ` +
      `(baseline one digest compare ${us(baseline.median)} µs; ratio ${(validLast.median / baseline.median).toFixed(1)}x)`,
  )
  console.log(
    `credentials: match position does not show: first key median ${us(validFirst.median)} µs, last key ` +
      `${us(validLast.median)} µs, unknown key ${us(miss.median)} µs (p99 ${us(validFirst.p99)} / ${us(validLast.p99)} / ${us(miss.p99)} µs)`,
  )
  console.log(
    `credentials: in-memory matcher alone (no async, no reload check) median ${us(core.median)} µs, p99 ${us(core.p99)} µs ` +
      `= ${(core.median / baseline.median).toFixed(1)}x one digest compare`,
  )
  console.log(
    `credentials: store.add (lock, fsync, rename) median ${(add.median / 1000).toFixed(2)} ms, p99 ${(add.p99 / 1000).toFixed(2)} ms`,
  )
} finally {
  await rm(dir, { recursive: true, force: true })
}
