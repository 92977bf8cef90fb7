// Handle codec throughput vs raw AES-256-GCM on the same bytes, measured side by side in this
// process. Run after a build: `node bench/run.mjs` (cwd = packages/handles), or `pnpm bench`.
// Ratios matter, not absolute numbers: the machine and its load change those.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { createHandleCodec } from '../dist/index.js'

const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 600)
const ROUNDS = 5
const IN_FLIGHT = 64

const identity = '0f8e2d7c-4b1a-4e2f-9c3d-5a6b7c8d9e0f'
const payload = { s: `ses_${'0123456789abcdefghijklmnop'}`, m: `msg_${'qrstuvwxyz0123456789ABCDEF'}` }
const codec = createHandleCodec({ secret: randomBytes(32) })

// The bytes the codec encrypts for this payload: 12-byte timestamp header + JSON, and an AAD of
// the same size (length-prefixed domain, version, kind, identity).
const plaintext = Buffer.concat([Buffer.alloc(12), Buffer.from(JSON.stringify(payload))])
const aad = Buffer.concat(
  ['agentgate/handle', 'v1', 'job', identity].map((part) => {
    const bytes = Buffer.from(part)
    const length = Buffer.alloc(4)
    length.writeUInt32BE(bytes.length)
    return Buffer.concat([length, bytes])
  }),
)
// Web Crypto gets plain Uint8Array copies, as the codec passes: pooled Buffers are measurably
// slower through it and would flatter the codec.
const webPlaintext = new Uint8Array(plaintext)
const webAad = new Uint8Array(aad)
const rawKey = randomBytes(32)
const webKey = await crypto.subtle.importKey('raw', rawKey, 'AES-GCM', false, ['encrypt', 'decrypt'])

async function codecOnce() {
  const handle = await codec.seal('job', identity, payload)
  await codec.open('job', identity, handle)
}

function nodeOnce() {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', rawKey, iv, { authTagLength: 16 })
  cipher.setAAD(aad)
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
  const tag = cipher.getAuthTag()
  const decipher = createDecipheriv('aes-256-gcm', rawKey, iv, { authTagLength: 16 })
  decipher.setAAD(aad)
  decipher.setAuthTag(tag)
  return Buffer.concat([decipher.update(ciphertext), decipher.final()])
}

async function webCryptoOnce() {
  const params = {
    name: 'AES-GCM',
    iv: crypto.getRandomValues(new Uint8Array(12)),
    additionalData: webAad,
    tagLength: 128,
  }
  const sealed = await crypto.subtle.encrypt(params, webKey, webPlaintext)
  await crypto.subtle.decrypt(params, webKey, sealed)
}

const inFlight = (once) => () => Promise.all(Array.from({ length: IN_FLIGHT }, once))

/** Operations per second of `run` (which performs `perCall` operations) over `durationMs`. */
async function rate(run, perCall = 1, durationMs = ROUND_MS) {
  const start = performance.now()
  let ops = 0
  let elapsed = 0
  while (elapsed < durationMs) {
    for (let i = 0; i < 64; i++) {
      await run()
      ops += perCall
    }
    elapsed = performance.now() - start
  }
  return (ops * 1000) / elapsed
}

const median = (values) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]
const fmt = (n) => Math.round(n).toLocaleString('en-US').replace(/,/g, ' ')

// Sanity: the codec round trip really works before it is timed.
const sample = await codec.seal('job', identity, payload)
if (JSON.stringify(await codec.open('job', identity, sample)) !== JSON.stringify(payload)) {
  throw new Error('codec round trip failed')
}
if (!nodeOnce().equals(plaintext)) throw new Error('node:crypto round trip failed')

const cases = {
  codec: (ms) => rate(codecOnce, 1, ms),
  node: (ms) => rate(nodeOnce, 1, ms),
  webcrypto: (ms) => rate(webCryptoOnce, 1, ms),
  codecParallel: (ms) => rate(inFlight(codecOnce), IN_FLIGHT, ms),
  webcryptoParallel: (ms) => rate(inFlight(webCryptoOnce), IN_FLIGHT, ms),
}
for (const measure of Object.values(cases)) await measure(200) // warm up the JIT and the thread pool
const results = Object.fromEntries(Object.keys(cases).map((name) => [name, []]))
// Interleaved rounds, so drift in machine load hits every case alike; the median is reported.
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, measure] of Object.entries(cases)) {
    globalThis.gc?.()
    results[name].push(await measure())
  }
}
const r = Object.fromEntries(Object.entries(results).map(([name, values]) => [name, median(values)]))

console.log(
  `handles: job handle ${sample.length} chars (payload ${plaintext.length} bytes); median of ${ROUNDS} rounds of ${ROUND_MS} ms`,
)
console.log(
  `handles: seal+open ${fmt(r.codec)}/s, raw node:crypto ${fmt(r.node)}/s, ratio ${(r.node / r.codec).toFixed(1)}x`,
)
console.log(
  `handles: seal+open ${fmt(r.codec)}/s, raw WebCrypto ${fmt(r.webcrypto)}/s, ratio ${(r.webcrypto / r.codec).toFixed(1)}x`,
)
console.log(
  `handles: ${IN_FLIGHT} in flight: seal+open ${fmt(r.codecParallel)}/s, raw WebCrypto ${fmt(r.webcryptoParallel)}/s, raw node:crypto (sync) ${fmt(r.node)}/s, ratio vs node:crypto ${(r.node / r.codecParallel).toFixed(1)}x`,
)
