import { readFileSync } from 'node:fs'
import { createCredentialStore } from '@sallyport/credentials'
import { CompactSign, createLocalJWKSet, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { HttpResponse, http } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OAUTH_ALGORITHMS } from '../src/config.js'
import { createOAuthVerifier, verifyJwsSignature } from '../src/http/oauth.js'
import { createGateway, type Gateway } from '../src/index.js'
import { type Credentials, makeCredentials, rpc, rpcBody, testSecret, unreachableRuntime } from './helpers.js'

const ISSUER = 'https://auth.example.test'
const RESOURCE = 'https://gateway.example.test/mcp'
const JWKS_URL = `${ISSUER}/.well-known/jwks.json`
const BASE = 'https://gateway.example.test'

type Signer = { alg: string; privateKey: Parameters<SignJWT['sign']>[0]; kid: string }
let rsa: Signer
let es: Signer
let ed: Signer
let stranger: Signer
let jwks: { keys: JWK[] }
const mswServer = setupServer(http.get(JWKS_URL, () => HttpResponse.json(jwks)))

let creds: Credentials
let gateway: Gateway

async function keyPair(alg: string, kid: string): Promise<{ signer: Signer; jwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }
  return { signer: { alg, privateKey, kid }, jwk }
}

async function token(
  signer: Signer,
  claims: Record<string, unknown> = {},
  options: {
    exp?: number | null
    /** `iat` as given (any JSON value); `null` leaves it out; absent means now. */
    iat?: unknown
    iss?: string
    aud?: string
    sub?: string
    header?: Record<string, unknown>
  } = {},
): Promise<string> {
  const iat: Record<string, unknown> =
    options.iat === undefined || options.iat === null ? {} : { iat: options.iat }
  const jwt = new SignJWT({ scope: 'mcp:tools', ...claims, ...iat })
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, ...options.header })
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? RESOURCE)
    .setSubject(options.sub ?? 'user-123')
  if (options.iat === undefined) jwt.setIssuedAt()
  if (options.exp !== null) jwt.setExpirationTime(options.exp ?? Math.floor(Date.now() / 1000) + 300)
  return jwt.sign(signer.privateKey)
}

beforeAll(async () => {
  mswServer.listen({ onUnhandledRequest: 'error' })
  const a = await keyPair('RS256', 'rsa-1')
  const b = await keyPair('ES256', 'ec-1')
  const c = await keyPair('EdDSA', 'ed-1')
  const d = await keyPair('RS256', 'rsa-1') // same kid, key not in the JWKS
  rsa = a.signer
  es = b.signer
  ed = c.signer
  stranger = d.signer
  jwks = { keys: [a.jwk, b.jwk, c.jwk] }
  creds = await makeCredentials()
  const store = createCredentialStore({ stateDir: creds.stateDir })
  await store.mapOAuth(ISSUER, 'user-123', 'discord')
  await store.mapOAuth(ISSUER, 'reader-sub', 'reader')
  gateway = createGateway({
    keys: creds.resolver,
    handleSecret: testSecret(),
    runtime: unreachableRuntime,
    workspaceRoot: creds.workspace,
    oauth: {
      resource: RESOURCE,
      issuer: ISSUER,
      jwksUrl: JWKS_URL,
      audience: RESOURCE,
      scopes: ['mcp:tools'],
      algorithms: ['RS256', 'ES256'],
    },
  })
})
afterAll(async () => {
  mswServer.close()
  await gateway.close()
  await creds.cleanup()
})

const toolCount = async (bearer: string): Promise<number | undefined> => {
  const res = await gateway.fetch(
    rpc(
      `${BASE}/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      { authorization: `Bearer ${bearer}` },
    ),
  )
  if (res.status !== 200) return undefined
  const body = await rpcBody<{ result?: { tools: unknown[] } }>(res)
  return body.result?.tools.length
}

describe('OAuth protected-resource metadata', () => {
  it.each(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'])(
    'serves %s without authentication, readable cross-origin',
    async (path) => {
      const res = await gateway.fetch(
        new Request(`${BASE}${path}`, { headers: { origin: 'https://anything.example' } }),
      )
      expect(res.status).toBe(200)
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      expect(await res.json()).toMatchObject({
        resource: RESOURCE,
        authorization_servers: [ISSUER],
        scopes_supported: ['mcp:tools'],
      })
    },
  )

  it('challenges an unauthenticated request with resource_metadata', async () => {
    const res = await gateway.fetch(rpc(`${BASE}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }))
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain(
      'resource_metadata="https://gateway.example.test/.well-known/oauth-protected-resource/mcp"',
    )
  })
})

describe('JWT bearer tokens', () => {
  it('accepts a valid RS256 token of a mapped subject, with the mapped policy', async () => {
    expect(await toolCount(await token(rsa))).toBe(7)
    expect(await toolCount(await token(rsa, {}, { sub: 'reader-sub' }))).toBe(9)
  })

  it('accepts ES256 when it is configured', async () => {
    expect(await toolCount(await token(es))).toBe(7)
  })

  it('never lets a scope select a policy', async () => {
    expect(await toolCount(await token(rsa, { scope: 'mcp:tools full admin', policy: 'full' }))).toBe(7)
  })

  const now = (): number => Math.floor(Date.now() / 1000)

  it('accepts an iat 10 s in the future (within the 30 s clock skew)', async () => {
    expect(await toolCount(await token(rsa, {}, { iat: now() + 10 }))).toBe(7)
  })

  it('accepts a token without iat (the spec requires exp, not iat)', async () => {
    expect(await toolCount(await token(rsa, {}, { iat: null }))).toBe(7)
  })

  const rejected: Array<[string, () => Promise<string>]> = [
    ['a token issued an hour in the future', () => token(rsa, {}, { iat: now() + 3600 })],
    [
      'a token issued a minute in the future (beyond the 30 s skew)',
      () => token(rsa, {}, { iat: now() + 60 }),
    ],
    ['an iat that is a string', () => token(rsa, {}, { iat: String(now()) })],
    ['an iat that is null', () => token(rsa, { iat: null }, { iat: null })],
    [
      'an iat of 1e400 (Infinity once parsed)',
      async () => {
        const claims = JSON.stringify({
          iss: ISSUER,
          aud: RESOURCE,
          sub: 'user-123',
          exp: now() + 300,
          scope: 'mcp:tools',
        }).replace(/}$/, ',"iat":1e400}')
        return new CompactSign(new TextEncoder().encode(claims))
          .setProtectedHeader({ alg: rsa.alg, kid: rsa.kid })
          .sign(rsa.privateKey)
      },
    ],
    ['an unmapped subject', () => token(rsa, {}, { sub: 'nobody' })],
    ['another issuer', () => token(rsa, {}, { iss: 'https://evil.example.test' })],
    ['another audience', () => token(rsa, {}, { aud: 'https://other.example.test/mcp' })],
    ['an expired token', () => token(rsa, {}, { exp: Math.floor(Date.now() / 1000) - 120 })],
    ['a token without exp', () => token(rsa, {}, { exp: null })],
    ['a token missing the required scope', () => token(rsa, { scope: 'other' })],
    ['an algorithm outside the configured list (EdDSA)', () => token(ed)],
    ['a signature by a key that is not in the JWKS', () => token(stranger)],
    [
      'alg none',
      async () => {
        const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')
        const payload = Buffer.from(
          JSON.stringify({
            iss: ISSUER,
            aud: RESOURCE,
            sub: 'user-123',
            exp: Math.floor(Date.now() / 1000) + 300,
            scope: 'mcp:tools',
          }),
        ).toString('base64url')
        return `${header}.${payload}.`
      },
    ],
    [
      'HS256 keyed with the public JWK',
      async () => {
        const secret = new TextEncoder().encode(JSON.stringify(jwks.keys[0]))
        return new SignJWT({ scope: 'mcp:tools' })
          .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
          .setIssuer(ISSUER)
          .setAudience(RESOURCE)
          .setSubject('user-123')
          .setExpirationTime('5m')
          .sign(secret)
      },
    ],
    [
      'a tampered payload',
      async () => {
        const [h, , s] = (await token(rsa)).split('.')
        const payload = Buffer.from(
          JSON.stringify({
            iss: ISSUER,
            aud: RESOURCE,
            sub: 'reader-sub',
            exp: Math.floor(Date.now() / 1000) + 300,
            scope: 'mcp:tools',
          }),
        ).toString('base64url')
        return `${h}.${payload}.${s}`
      },
    ],
  ]

  it.each(rejected)('rejects %s with 401', async (_, make) => {
    expect(await toolCount(await make())).toBeUndefined()
  })

  it('rejects non-HTTPS OAuth settings at creation', () => {
    for (const bad of [
      { resource: 'http://gw.test/mcp', issuer: ISSUER, jwksUrl: JWKS_URL, audience: RESOURCE },
      { resource: RESOURCE, issuer: 'http://auth.test', jwksUrl: JWKS_URL, audience: RESOURCE },
      { resource: RESOURCE, issuer: ISSUER, jwksUrl: 'http://auth.test/jwks', audience: RESOURCE },
      { resource: RESOURCE, issuer: ISSUER, jwksUrl: JWKS_URL, audience: RESOURCE, algorithms: ['HS256'] },
    ]) {
      expect(() => createOAuthVerifier(bad as never)).toThrow(TypeError)
    }
  })
})

describe('Wycheproof JWS vectors through the signature check', () => {
  const fixture = JSON.parse(
    readFileSync(new URL('./fixtures/wycheproof-jws-subset.json', import.meta.url), 'utf8'),
  ) as {
    testGroups: Array<{
      comment?: string
      public?: JWK
      private?: JWK
      tests: Array<{ tcId: number; comment: string; jws: string; result: string }>
    }>
  }
  const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth']
  const cases = fixture.testGroups.flatMap((group) => {
    const source = group.public ?? group.private ?? {}
    const publicJwk = Object.fromEntries(
      Object.entries(source).filter(([k]) => !PRIVATE_MEMBERS.includes(k)),
    ) as JWK
    return group.tests.map((t) => ({
      name: `${group.comment ?? source.alg} #${t.tcId} ${t.comment}`,
      publicJwk,
      alg: source.alg,
      ...t,
    }))
  })

  it.each(cases)('$name', async ({ publicJwk, alg, jws, result }) => {
    // Symmetric (oct) keys are never accepted: without a public key there is nothing to verify with.
    const keys =
      publicJwk.kty === 'oct' ? createLocalJWKSet({ keys: [] }) : createLocalJWKSet({ keys: [publicJwk] })
    const ok = await verifyJwsSignature(jws, keys, OAUTH_ALGORITHMS)
    const expected =
      result === 'valid' &&
      publicJwk.kty !== 'oct' &&
      (OAUTH_ALGORITHMS as readonly string[]).includes(alg ?? '')
    expect(ok).toBe(expected)
  })
})
