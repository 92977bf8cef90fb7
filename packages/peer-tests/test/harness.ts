import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { createCredentialStore, createKeyResolver } from '@sallyport/credentials'
import {
  createGateway,
  createLogger,
  gatewayUpstreamOptions,
  runtimeFromUpstream,
} from '@sallyport/gateway-server'
import { type Stack, startStack } from '@sallyport/testkit'
import { createUpstreamClient } from '@sallyport/upstream-client'

export interface PeerKeys {
  chat: string
  read: string
  full: string
}

/** One gateway log line: only the fields the peer tests look at. */
export interface LogLine {
  event?: string
  status?: number
  reason?: string
  rpcMethod?: string
  tool?: string
  username?: string
  requestId?: string
  outcome?: string
  /** Multi round-trip requests (2026-07-28): the round of this retry, forms asked / answered / declined. */
  inputRound?: number
  inputAsked?: number
  inputAnswered?: number
  inputDeclined?: number
}

export interface PeerGateway {
  /** `http://127.0.0.1:<port>`; the MCP endpoint is `${url}/mcp`. */
  url: string
  keys: PeerKeys
  stack: Stack
  /** The gateway's structured log so far. */
  logs(): LogLine[]
  /** A fresh temp dir, removed by `stop()`. */
  tempDir(prefix: string): Promise<string>
  stop(): Promise<void>
}

export const CHAT_TOOLS = [
  'gateway.agent.run',
  'gateway.catalog.get',
  'gateway.interaction.respond',
  'gateway.job.cancel',
  'gateway.job.get',
  'gateway.session.get',
  'gateway.session.list',
]
export const READ_TOOLS = [...CHAT_TOOLS, 'gateway.workspace.read', 'gateway.workspace.search'].sort()
export const FULL_TOOLS = [...READ_TOOLS, 'gateway.session.delete', 'gateway.session.fork'].sort()

/**
 * The real gateway on 127.0.0.1 port 0 in front of the REAL runtime (testkit: the pinned
 * `opencode` binary with the scripted model), with one credential per policy.
 */
export async function startPeerGateway(
  options: { allowedOrigins?: readonly string[] } = {},
): Promise<PeerGateway> {
  const temps: string[] = []
  const tempDir = async (prefix: string): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), prefix))
    temps.push(dir)
    return dir
  }
  const stateDir = await tempDir('sallyport-peer-state-')
  const store = createCredentialStore({ stateDir })
  const keys: PeerKeys = {
    chat: (await store.add('chatter', 'chat')).key,
    read: (await store.add('reader', 'read')).key,
    full: (await store.add('owner', 'full')).key,
  }
  const resolver = createKeyResolver({ stateDir })
  let logText = ''
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logText += chunk.toString()
      done()
    },
  })
  const stack = await startStack()
  const upstream = createUpstreamClient({
    ...gatewayUpstreamOptions,
    baseUrl: stack.runtime.url,
    username: stack.runtime.username,
    password: stack.runtime.password,
    directory: stack.runtime.directory,
  })
  const gateway = createGateway({
    keys: resolver,
    handleSecret: new Uint8Array(randomBytes(32)),
    runtime: runtimeFromUpstream(upstream),
    workspaceRoot: stack.runtime.directory,
    logger: createLogger({ level: 'debug', destination }),
    ...(options.allowedOrigins && { allowedOrigins: options.allowedOrigins }),
  })
  const server = await gateway.listen({ host: '127.0.0.1', port: 0 })
  return {
    url: server.url,
    keys,
    stack,
    logs: () =>
      logText
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as LogLine),
    tempDir,
    async stop() {
      await gateway.close()
      upstream.close()
      await stack.stop()
      resolver.close()
      for (const dir of temps) await rm(dir, { recursive: true, force: true })
    },
  }
}
