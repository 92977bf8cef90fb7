import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'

// The CI run of the scale-out harness (bench/scale-out.mjs --smoke, issue "Scale out without
// sticky sessions, survive faults, and show it"): `sallyport up` with the scripted model, two
// `sallyport serve` replicas sharing only the stack's secret files, Debian's nginx in front of
// them (round robin, no affinity), real MCP SDK clients. It fails only on correctness, never on a
// timing: a not-found-class error, a lost job (not terminal, or missing from session.list, or
// read differently by another replica), consecutive calls that did not alternate between
// replicas, a workflow step (poll, answer, round retry, cancel, fork, delete) never served by
// another replica than the one that issued its handle, a second answer or a replayed round state
// accepted by another replica, a rotated key not refused (or its new key not accepted) by every
// replica within 10 s of the write, other credentials' calls failing during the rotation, a read
// failing across the SIGKILL of a replica (nginx moves reads to another one), or a handle issued
// by the killed replica that no longer works on the restarted one or through nginx. What it
// prints besides (throughput of one gateway against two, runs sent to one session at once
// through two replicas) is information, not a check. `--control sticky|foreign-secret` runs of
// the harness show these checks failing (ip_hash affinity; a replica with its own secret).

const HARNESS = join(import.meta.dirname, '..', 'bench', 'scale-out.mjs')
const NGINX = '/usr/sbin/nginx'

it('scale-out smoke: two gateways behind nginx, no affinity, rotation and a killed replica', async () => {
  // Not a skip: CI installs nginx (scripts/install-system-deps.sh), so its absence is a failure.
  expect(
    existsSync(NGINX),
    `${NGINX} is missing: install Debian's nginx (scripts/install-system-deps.sh does it as root)`,
  ).toBe(true)
  const child = spawn(process.execPath, [HARNESS, '--smoke', '--nginx', NGINX], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  // The harness bounds itself (300 s) and stops everything it started; this is the backstop.
  const timer = setTimeout(() => child.kill('SIGTERM'), 390_000)
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(timer)
  for (const line of output.split('\n')) if (line.startsWith('scale-out')) process.stdout.write(`${line}\n`)
  const verdict = output.split('\n').find((line) => line.startsWith('scale-out smoke '))
  expect(verdict, output.slice(-4000)).toBe('scale-out smoke passed')
  expect(code, output.slice(-4000)).toBe(0)
}, 420_000)
