import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { createCredentialStore, createKeyResolver, type KeyResolver } from '@sallyport/credentials'
import { createLogger, type Logger } from '../src/logger.js'
import type { RuntimePort } from '../src/runtime/port.js'

export interface Credentials {
  stateDir: string
  /** An empty workspace directory inside the temp dir. */
  workspace: string
  resolver: KeyResolver
  keys: { full: string; read: string; chat: string; chat2: string }
  cleanup(): Promise<void>
}

/** A real credential store in a temp dir with one credential per policy (and a second chat one). */
export async function makeCredentials(): Promise<Credentials> {
  const stateDir = await mkdtemp(join(tmpdir(), 'sallyport-gw-'))
  const store = createCredentialStore({ stateDir })
  const full = await store.add('owner', 'full')
  const read = await store.add('reader', 'read')
  const chat = await store.add('discord', 'chat')
  const chat2 = await store.add('slack', 'chat')
  const resolver = createKeyResolver({ stateDir })
  const workspace = join(stateDir, 'workspace')
  await mkdir(workspace)
  return {
    stateDir,
    workspace,
    resolver,
    keys: { full: full.key, read: read.key, chat: chat.key, chat2: chat2.key },
    async cleanup() {
      resolver.close()
      await rm(stateDir, { recursive: true, force: true })
    },
  }
}

export const testSecret = (): Uint8Array => new Uint8Array(randomBytes(32))

/** A runtime that must never be reached (boundary tests); it only reports itself healthy. */
export const unreachableRuntime: RuntimePort = new Proxy({} as RuntimePort, {
  get: (_, name) => {
    if (name === 'then') return undefined
    if (name === 'healthy') return async () => true
    if (name === 'close') return undefined
    return () => {
      throw new Error(`runtime.${String(name)} must not be called in this test`)
    }
  },
})

/** A logger whose JSON lines are kept for assertions. */
export function captureLogger(): {
  logger: Logger
  lines: () => Array<Record<string, unknown>>
  raw: () => string
} {
  let text = ''
  const destination = new Writable({
    write(chunk, _enc, done) {
      text += chunk.toString()
      done()
    },
  })
  const logger = createLogger({ level: 'debug', destination })
  return {
    logger,
    raw: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  }
}

/** A JSON-RPC tools/list request as a 2025-era stateless client sends it. */
export function rpc(url: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  })
}

/** The JSON-RPC message of an MCP response: a JSON body, or the data line of a one-event SSE stream. */
export async function rpcBody<T>(res: Response): Promise<T> {
  const text = await res.text()
  const data = text.startsWith('{')
    ? text
    : (text
        .split('\n')
        .find((l) => l.startsWith('data: '))
        ?.slice(6) ?? '{}')
  return JSON.parse(data) as T
}
