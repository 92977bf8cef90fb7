// Handle codec throughput vs raw AES-256-GCM on the same bytes, measured side by side in this
// process. Run after a build: `node bench/run.mjs` (cwd = packages/handles), or `pnpm bench`.
// Ratios matter, not absolute numbers: the machine and its load change those.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { availableParallelism, loadavg } from 'node:os'
import { createHandleCodec } from '../dist/index.js'

// Each case runs in many short slices, round-robin with the others, so that load from other
// processes on the machine spreads evenly over all cases instead of hitting one.
const SLICE_MS = 100
const SLICES = Number(process.env.BENCH_SLICES ?? 25)
const IN_FLIGHT = 64

const identity = '0f8e2d7c-4b1a-4e2f-9c3d-5a6b7c8d9e0f'
const payload = { s: `ses_${'0123456789abcdefghijklmnop'}`, m: `msg_${'qrstuvwxyz0123456789ABCDEF'}` }
const codec = createHandleCodec({ secret: randomBytes(32) })

// The bytes the codec encrypts for this payload: 12-byte timestamp header + JSON, and an AAD of
// the same size (length-prefixed domain, version, kind, identity).
const plaintext = Buffer.concat([Buffer.alloc(12), Buffer.from(JSON.stringify(payload))])
const aad = Buffer.concat(
  ['sallyport/handle', 'v1', 'job', identity].map((part) => {
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

/** Runs `run` (which performs `perCall` operations) for about `durationMs`: `{ ops, ms }`. */
async function slice(run, perCall, durationMs) {
  const start = performance.now()
  let ops = 0
  let elapsed = 0
  // Batches of 16 keep the clock reads out of the cheap cases; a 64-wide batch is long enough alone.
  const batch = perCall > 1 ? 1 : 16
  while (elapsed < durationMs) {
    for (let i = 0; i < batch; i++) {
      await run()
      ops += perCall
    }
    elapsed = performance.now() - start
  }
  return { ops, ms: elapsed }
}

const fmt = (n) => Math.round(n).toLocaleString('en-US').replace(/,/g, ' ')

// Sanity: the codec round trip really works before it is timed.
const sample = await codec.seal('job', identity, payload)
if (JSON.stringify(await codec.open('job', identity, sample)) !== JSON.stringify(payload)) {
  throw new Error('codec round trip failed')
}
if (!nodeOnce().equals(plaintext)) throw new Error('node:crypto round trip failed')

const cases = {
  codec: [codecOnce, 1],
  node: [nodeOnce, 1],
  webcrypto: [webCryptoOnce, 1],
  codecParallel: [inFlight(codecOnce), IN_FLIGHT],
  webcryptoParallel: [inFlight(webCryptoOnce), IN_FLIGHT],
}
for (const [run, perCall] of Object.values(cases)) await slice(run, perCall, 200) // warm up JIT and thread pool
const totals = Object.fromEntries(Object.keys(cases).map((name) => [name, { ops: 0, ms: 0 }]))
for (let i = 0; i < SLICES; i++) {
  for (const [name, [run, perCall]] of Object.entries(cases)) {
    const { ops, ms } = await slice(run, perCall, SLICE_MS)
    totals[name].ops += ops
    totals[name].ms += ms
  }
}
const r = Object.fromEntries(Object.entries(totals).map(([name, t]) => [name, (t.ops * 1000) / t.ms]))

console.log(
  `handles: job handle ${sample.length} chars (payload ${plaintext.length} bytes); ${SLICES} x ${SLICE_MS} ms slices per case, round-robin; load ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`,
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
