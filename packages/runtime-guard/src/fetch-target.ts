import { lookup as dnsLookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

/** Resolves a host name to every address it has (injected in tests). */
export type LookupAll = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>

export type FetchVerdict = { ok: true } | { ok: false; reason: string }

/**
 * Addresses a remote credential's agent may never fetch from: loopback (the runtime's own API,
 * the gateway, the moderator), private and carrier-grade NAT networks, link-local (cloud metadata
 * at 169.254.169.254), multicast, and the unspecified and reserved ranges. An approval cannot
 * open them: an `always` approval of `webfetch` covers every URL, so only this check stands
 * between a prompt-injected run and the host's own services.
 */
const BLOCKED = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and IPv4-compatible (::a.b.c.d)
  ['::1', 128],
  ['::ffff:0:0:0', 96], // SIIT (IPv4-translated)
  ['2002::', 16], // 6to4: embeds any IPv4 address
  ['2001::', 32], // Teredo: embeds any IPv4 address
  ['64:ff9b:1::', 48], // local-use NAT64
  ['64:ff9b::', 96], // NAT64 can reach any IPv4 address
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv6')
// No rule for IPv4-mapped IPv6 (::ffff:0:0/96): BlockList checks a mapped address against the
// IPv4 rules above, and such a rule would also match EVERY plain IPv4 address.

/** True when `address` (an IP literal) is in a blocked range. */
export function isBlockedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/gu, '').replace(/%.*$/u, '')
  const family = isIP(bare)
  if (family === 4) return BLOCKED.check(bare, 'ipv4')
  if (family === 6) return BLOCKED.check(bare, 'ipv6')
  return true // not an address at all: refuse
}

const defaultLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true })

/**
 * Decides whether a guarded agent may fetch `url`: http(s) only, no credentials in the URL, and
 * the host — an IP literal, or EVERY address its name resolves to — outside the blocked ranges.
 * A name that does not resolve is refused (the fetch could not work anyway). The runtime
 * resolves the name again when it fetches, so a DNS answer that changes in between (rebinding)
 * is not covered here, nor a redirect the fetch follows after the check (the runtime follows
 * them; reaching one needs a full credential's approval of a public URL first). No address in
 * the blocked ranges is reachable through a literal or a stable name.
 */
export async function checkFetchTarget(
  url: unknown,
  lookup: LookupAll = defaultLookup,
): Promise<FetchVerdict> {
  if (typeof url !== 'string') return { ok: false, reason: 'a URL is required' }
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { ok: false, reason: 'not a valid URL' }
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { ok: false, reason: 'only http and https URLs can be fetched' }
  if (parsed.username !== '' || parsed.password !== '')
    return { ok: false, reason: 'URLs with credentials are not fetched' }
  const host = parsed.hostname.replace(/^\[|\]$/gu, '').toLowerCase()
  const blocked = { ok: false, reason: 'local and private network addresses are not reachable' } as const
  if (host === 'localhost' || host.endsWith('.localhost') || host === '') return blocked
  if (isIP(host) !== 0) return isBlockedAddress(host) ? blocked : { ok: true }
  let addresses: ReadonlyArray<{ address: string }>
  try {
    addresses = await lookup(host)
  } catch {
    return { ok: false, reason: 'the host name does not resolve' }
  }
  if (addresses.length === 0) return { ok: false, reason: 'the host name does not resolve' }
  return addresses.some(({ address }) => isBlockedAddress(address)) ? blocked : { ok: true }
}
