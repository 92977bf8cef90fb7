// The kubelet's "atomic writer" (kubernetes pkg/volume/util/atomic_writer.go), which writes every
// Secret, ConfigMap and projected volume, rebuilt with synchronous fs calls for the tests: one
// write of a payload ({ 'owner/key': '…', … }) into `target`, step by step as the kubelet does it.
// Imported by src/kubernetes-secret-volume.test.ts, and run as a worker thread there to swap a
// volume from another thread while the resolver reads it.

import { randomInt } from 'node:crypto'
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { isMainThread, parentPort, workerData } from 'node:worker_threads'

/** `..` + the UTC time in Go's layout 2006_01_02_15_04_05 + `.` + os.MkdirTemp's random digits. */
export function timestampDirName(now = new Date()) {
  const t = now.toISOString()
  const layout = `${t.slice(0, 4)}_${t.slice(5, 7)}_${t.slice(8, 10)}_${t.slice(11, 13)}_${t.slice(14, 16)}_${t.slice(17, 19)}`
  return `..${layout}.${randomInt(1_000_000_000, 4_294_967_295)}`
}

/** Like os.MkdirTemp: a new directory under a fresh random name (another name on a collision). */
function makeTimestampDir(target) {
  for (;;) {
    const name = timestampDirName()
    try {
      mkdirSync(join(target, name))
      return name
    } catch (error) {
      if (error.code !== 'EEXIST') throw error
    }
  }
}

function readlinkOrUndefined(path) {
  try {
    return readlinkSync(path)
  } catch {
    return undefined
  }
}

/**
 * Projects `payload` into `target` with file mode `mode` (the volume's defaultMode; with an
 * fsGroup the kubelet ORs in 0440):
 *  1. the files go into a new timestamped directory (0755, subdirectories as needed);
 *  2. each first path component gets its visible link `<name> -> ..data/<name>` if missing;
 *  3. `..data_tmp -> <new directory>` is renamed over `..data` (the atomic step);
 *  4. links of names the payload no longer has are removed, then the old directory.
 */
export function projectVolumeSync(target, payload, mode = 0o440) {
  mkdirSync(target, { recursive: true })
  const dataLink = join(target, '..data')
  const oldTsDir = readlinkOrUndefined(dataLink)
  const oldNames = oldTsDir === undefined ? [] : readdirSync(join(target, oldTsDir))
  const tsDirName = makeTimestampDir(target)
  const tsDir = join(target, tsDirName)
  chmodSync(tsDir, 0o755)
  for (const [path, content] of Object.entries(payload)) {
    const file = join(tsDir, path)
    mkdirSync(dirname(file), { recursive: true, mode: 0o755 })
    writeFileSync(file, content, { mode })
    chmodSync(file, mode)
  }
  const names = new Set(Object.keys(payload).map((path) => path.split('/')[0]))
  for (const name of names) {
    const visible = join(target, name)
    if (readlinkOrUndefined(visible) === undefined) symlinkSync(join('..data', name), visible)
  }
  symlinkSync(tsDirName, join(target, '..data_tmp'))
  renameSync(join(target, '..data_tmp'), dataLink)
  for (const name of oldNames) if (!names.has(name)) rmSync(join(target, name), { force: true })
  if (oldTsDir !== undefined) rmSync(join(target, oldTsDir), { recursive: true, force: true })
}

// As a worker: `rounds` updates of `target`, each a payload of `payloads` in turn, `gapMs` apart
// (Secret updates are minutes apart in a cluster; a gap of a few ms still leaves every read of
// the small test store racing a swap or the deletion of the old data). Posts 'done'.
if (!isMainThread && workerData?.role === 'kubelet') {
  const { target, payloads, rounds, gapMs } = workerData
  const gap = new Int32Array(new SharedArrayBuffer(4))
  for (let round = 0; round < rounds; round++) {
    projectVolumeSync(target, payloads[round % payloads.length])
    Atomics.wait(gap, 0, 0, gapMs)
  }
  parentPort?.postMessage('done')
}
