// Reads that many callers make at once (a full session listing: one request, but hundreds of
// milliseconds of the runtime's time at thousands of sessions) are shared rather than repeated:
// at most one runs per key; a caller arriving while it runs waits for the next one, which starts
// when the running one ends and serves every caller that arrived in the meantime. Each caller
// still gets a read that started after it called (nothing older than its call), and the runtime
// sees at most one such read at a time per key, however many callers there are.

/** Shares reads per key: see the header. Entries are dropped once their key is idle. */
export function createReadSharing<K, T>(read: (key: K) => Promise<T>): (key: K) => Promise<T> {
  const byKey = new Map<K, { running?: Promise<T>; queued?: Promise<T> }>()
  const start = (key: K, entry: { running?: Promise<T>; queued?: Promise<T> }): Promise<T> => {
    const promise = read(key)
    entry.running = promise
    const done = (): void => {
      if (entry.running !== promise) return
      entry.running = undefined
      if (entry.queued === undefined && byKey.get(key) === entry) byKey.delete(key)
    }
    promise.then(done, done)
    return promise
  }
  return (key) => {
    let entry = byKey.get(key)
    if (entry === undefined) {
      entry = {}
      byKey.set(key, entry)
    }
    if (entry.queued !== undefined) return entry.queued
    const running = entry.running
    if (running === undefined) return start(key, entry)
    const current = entry
    const ignore = (): undefined => undefined
    current.queued = running.then(ignore, ignore).then(() => {
      current.queued = undefined
      return start(key, current)
    })
    return current.queued
  }
}
