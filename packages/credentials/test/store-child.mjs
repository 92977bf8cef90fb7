// Child process for the concurrency tests: imports a bundle of the package, waits for a shared
// start time so every child runs at once, applies its operations in order, and prints one JSON
// line with the outcome of each.
import { pathToFileURL } from 'node:url'

const [bundle, stateDir, opsJson, startAtText] = process.argv.slice(2)
const credentials = await import(pathToFileURL(bundle).href)
const store = credentials.createCredentialStore({ stateDir, lockTimeoutMs: 60_000 })
const ops = JSON.parse(opsJson)

const wait = Number(startAtText) - Date.now()
if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))

const results = []
for (const op of ops) {
  try {
    let value
    if (op.op === 'add') value = await store.add(op.username, op.policy)
    else if (op.op === 'rotate') value = await store.rotate(op.username)
    else if (op.op === 'setPolicy') value = await store.setPolicy(op.username, op.policy)
    else if (op.op === 'map') value = await store.mapOAuth(op.issuer, op.subject, op.username)
    else if (op.op === 'remove') value = await store.remove(op.username)
    else if (op.op === 'seed') value = await credentials.seedStack({ stateDir })
    else throw new Error(`unknown op ${op.op}`)
    results.push({ ...op, ok: true, value })
  } catch (error) {
    if (typeof error?.code !== 'string' || !error.code.startsWith('ERR_CREDENTIALS_')) throw error
    results.push({ ...op, ok: false, code: error.code })
  }
}
process.stdout.write(`${JSON.stringify(results)}\n`)
