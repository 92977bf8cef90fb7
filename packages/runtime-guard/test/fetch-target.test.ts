import { describe, expect, it } from 'vitest'
import { checkFetchTarget, isBlockedAddress } from '../src/index.ts'

const resolvesTo =
  (...addresses: string[]) =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '0.0.0.0',
    '10.1.2.3',
    '100.64.0.1',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::7f00:1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'fe80::1%eth0',
    '[::1]',
    'ff02::1',
    '::7f00:1',
    '::127.0.0.1',
    '2002:7f00:1::',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '::ffff:0:7f00:1',
    '64:ff9b:1::7f00:1',
    'not-an-address',
  ])('blocks %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true)
  })

  it.each(['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    'lets %s through',
    (address) => {
      expect(isBlockedAddress(address)).toBe(false)
    },
  )
})

describe('checkFetchTarget', () => {
  it.each([
    ['loopback literal', 'http://127.0.0.1:3810/session'],
    ['loopback as one decimal number', 'http://2130706433/'],
    ['loopback in hex', 'http://0x7f.0.0.1/'],
    ['loopback shortened', 'http://127.1/'],
    ['IPv6 loopback', 'http://[::1]:8787/'],
    ['mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]/'],
    ['localhost', 'http://localhost:8787/health'],
    ['a .localhost name', 'http://gateway.localhost/'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['a private network', 'https://192.168.0.10/'],
  ])('refuses %s', async (_name, url) => {
    const lookup = async () => {
      throw new Error('no lookup expected for a literal or localhost')
    }
    expect(await checkFetchTarget(url, lookup)).toEqual({
      ok: false,
      reason: 'local and private network addresses are not reachable',
    })
  })

  it('refuses a name that resolves to loopback, even among public addresses', async () => {
    expect(
      await checkFetchTarget('https://rebind.example/', resolvesTo('93.184.216.34', '127.0.0.1')),
    ).toMatchObject({
      ok: false,
    })
    expect(await checkFetchTarget('https://v6.example/', resolvesTo('::1'))).toMatchObject({ ok: false })
  })

  it('lets a public name and a public literal through', async () => {
    expect(await checkFetchTarget('https://example.com/x', resolvesTo('93.184.216.34'))).toEqual({ ok: true })
    expect(await checkFetchTarget('http://93.184.216.34/', resolvesTo())).toEqual({ ok: true })
  })

  it.each([
    ['a name that does not resolve', 'https://nowhere.invalid/', resolvesTo()],
    ['a lookup failure', 'https://x.example/', async () => Promise.reject(new Error('ENOTFOUND'))],
  ])('refuses %s', async (_name, url, lookup) => {
    expect(await checkFetchTarget(url, lookup)).toEqual({
      ok: false,
      reason: 'the host name does not resolve',
    })
  })

  it.each([
    ['file://', 'file:///etc/passwd'],
    ['ftp', 'ftp://example.com/'],
    ['credentials in the URL', 'https://user:pw@example.com/'],
    ['not a URL', 'not a url'],
    ['not a string', 42],
  ])('refuses %s', async (_name, url) => {
    expect(await checkFetchTarget(url, resolvesTo('93.184.216.34'))).toMatchObject({ ok: false })
  })
})
