import type { RuntimeSession } from '../runtime/port.js'

// The newest sessions a credential owns, read from the runtime without listing every session
// when a few suffice. The runtime has no cursor and no owner filter: `GET /session` gives the
// `limit` most recently updated sessions (ties in no defined order), or those updated since
// `start`. So a small probe is read first; when it holds enough of the caller's sessions the
// listing stops there, otherwise everything is read once (never a third, repeated full page).
// Ownership is verified in the order of the listing and only as far as needed.

/** What the paging reads: the runtime port's two listings (see `RuntimePort`). */
export interface SessionPageSource {
  listSessions(): Promise<RuntimeSession[]>
  listSessionPage?(page: { limit: number; start?: number }): Promise<RuntimeSession[]>
}

/** Tuning of {@link newestOwned}; the defaults suit the runtime (a record costs far more than a request). */
export interface OwnedPagingOptions {
  /** Smallest probe. Default 200. */
  minProbe?: number
  /** The probe reads this many sessions per owned session wanted. Default 4. */
  probePerWanted?: number
  /** The `limit` that stands for "every session". Default 1 000 000. */
  maxLimit?: number
  /** Sessions verified together before checking whether enough were found. Default 256. */
  verifyChunk?: number
  /**
   * False: read every session at once, without the probe first (for a caller whose last listing
   * needed every session anyway: the probe would be a wasted round trip). Default true.
   */
  probe?: boolean
  /** Called when every session was read (the probe did not suffice, or there was none). */
  onFullListing?: () => void
}

/** The gateway's order of a credential's sessions: newest update first, ties by id (descending). */
export function newestFirst(a: RuntimeSession, b: RuntimeSession): number {
  return b.time.updated - a.time.updated || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
}

/**
 * The first `count` sessions `isOwned` accepts, in {@link newestFirst} order, and whether more
 * exist: the same answer as filtering and sorting the full listing (when the runtime lists newest
 * first as documented; a page that is not in that order makes it fall back to the full listing).
 */
export async function newestOwned(
  source: SessionPageSource,
  isOwned: (session: RuntimeSession) => Promise<boolean>,
  count: number,
  options: OwnedPagingOptions = {},
): Promise<{ sessions: RuntimeSession[]; more: boolean }> {
  const {
    minProbe = 200,
    probePerWanted = 4,
    maxLimit = 1_000_000,
    verifyChunk = 256,
    probe = true,
  } = options
  const wanted = count + 1
  const finish = (owned: RuntimeSession[]): { sessions: RuntimeSession[]; more: boolean } => {
    const sorted = [...owned].sort(newestFirst)
    return { sessions: sorted.slice(0, count), more: sorted.length > count }
  }
  const listPage = source.listSessionPage?.bind(source)
  if (!listPage) return finish(await ownedAmong(await source.listSessions(), isOwned, verifyChunk))

  const first = probe ? Math.min(maxLimit, Math.max(minProbe, probePerWanted * wanted)) : maxLimit
  for (let limit = first; ; limit = maxLimit) {
    const page = await listPage({ limit })
    if (limit >= maxLimit) options.onFullListing?.()
    if (!isNewestFirst(page))
      return finish(await ownedAmong(await source.listSessions(), isOwned, verifyChunk))
    const scan = await scanNewest(page, isOwned, wanted, verifyChunk)
    // Enough sessions updated after everything not read yet: nothing unread can come before them.
    if (scan.settled) return finish(scan.owned)
    // A short page is every session there is (and the largest page is all we ever read).
    if (page.length < limit || limit >= maxLimit) return finish(scan.owned)
    const edge = page.at(-1)?.time.updated
    if (scan.owned.length >= wanted && edge !== undefined) {
      // Enough, but the page may have cut through sessions updated in the same millisecond as its
      // last one (the runtime orders ties arbitrarily, the gateway by id): read every session
      // updated since then, which is complete and ends before anything unread.
      const since = await everySince(listPage, edge, page.length, maxLimit)
      return finish(await ownedAmong(since, isOwned, verifyChunk))
    }
  }
}

/** True when `page` is ordered newest update first (ties in any order). */
function isNewestFirst(page: readonly RuntimeSession[]): boolean {
  for (let i = 1; i < page.length; i++)
    if ((page[i]?.time.updated ?? 0) > (page[i - 1]?.time.updated ?? 0)) return false
  return true
}

/**
 * Verifies `page` (newest first) in chunks and stops once `wanted` owned sessions were updated
 * strictly after the last session verified: those are `settled`, as every session not verified
 * (in this page or beyond it) was updated no later than that one.
 */
async function scanNewest(
  page: readonly RuntimeSession[],
  isOwned: (session: RuntimeSession) => Promise<boolean>,
  wanted: number,
  chunk: number,
): Promise<{ owned: RuntimeSession[]; settled: boolean }> {
  const owned: RuntimeSession[] = []
  for (let i = 0; i < page.length; i += chunk) {
    const slice = page.slice(i, i + chunk)
    const flags = await Promise.all(slice.map(isOwned))
    slice.forEach((session, j) => {
      if (flags[j] === true) owned.push(session)
    })
    const last = slice.at(-1)?.time.updated ?? Number.NEGATIVE_INFINITY
    const settled = owned.filter((s) => s.time.updated > last)
    if (settled.length >= wanted) return { owned: settled, settled: true }
  }
  return { owned, settled: false }
}

/** The sessions of `list` that `isOwned` accepts (verified in chunks). */
async function ownedAmong(
  list: readonly RuntimeSession[],
  isOwned: (session: RuntimeSession) => Promise<boolean>,
  chunk: number,
): Promise<RuntimeSession[]> {
  const owned: RuntimeSession[] = []
  for (let i = 0; i < list.length; i += chunk) {
    const slice = list.slice(i, i + chunk)
    const flags = await Promise.all(slice.map(isOwned))
    slice.forEach((session, j) => {
      if (flags[j] === true) owned.push(session)
    })
  }
  return owned
}

/** Every session updated at or after `start`, growing the limit until a page comes back short. */
async function everySince(
  listPage: NonNullable<SessionPageSource['listSessionPage']>,
  start: number,
  atLeast: number,
  maxLimit: number,
): Promise<RuntimeSession[]> {
  for (let limit = Math.min(maxLimit, Math.max(2, atLeast * 2)); ; limit = Math.min(maxLimit, limit * 4)) {
    const page = await listPage({ limit, start })
    if (page.length < limit || limit >= maxLimit) return page
  }
}
