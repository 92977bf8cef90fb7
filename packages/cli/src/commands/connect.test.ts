import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CredentialError } from '@sallyport/credentials'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { editConfig } from '../../test/stack-fixture.ts'
import { useTempStack } from '../../test/temp-stack.ts'
import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { main } from '../main.ts'
import {
  CONNECT_CLIENTS,
  type ConnectClient,
  checkGatewayUrl,
  checkServerName,
  clientConfig,
  connect,
  connectNotes,
  INSPECTOR_PACKAGE,
  inspectorCommand,
  KEY_PLACEHOLDER,
  MCP_REMOTE_PACKAGE,
  mcpRemoteNeedsAllowHttp,
  renderSnippet,
  resolveClient,
  shellWord,
} from './connect.ts'

// The generators of `sallyport connect`: exact shapes, quoting, URL checks, the stack's URL and
// `--credential`. packages/peer-tests/test/connect.test.ts feeds the same snippets to the real
// clients (SDK, Inspector CLI, mcp-remote).

const stack = useTempStack({ init: 'in-process' })

const URL_LOCAL = 'http://127.0.0.1:8787/mcp'
const KEY = `agk_${'k'.repeat(43)}`
const ALL: ConnectClient[] = ['desktop', 'vscode', 'cursor', 'inspector', 'mcp-remote']

/** Collects what a command writes; env defaults to none (no SALLYPORT_* leaking in). */
function collect(env: NodeJS.ProcessEnv = {}): Io & { stdout: () => string; stderr: () => string } {
  let out = ''
  let err = ''
  return {
    out: (text) => {
      out += text
    },
    err: (text) => {
      err += text
    },
    env,
    stdout: () => out,
    stderr: () => err,
  }
}

/** What a POSIX shell makes of a command line: its words (the shell itself splits and unquotes). */
function shellWords(line: string): string[] {
  const out = execFileSync('sh', ['-c', 'eval "set -- $LINE"; printf "%s\\0" "$@"'], {
    env: { LINE: line, PATH: process.env.PATH },
    encoding: 'utf8',
  })
  return out.split('\0').slice(0, -1)
}

const occurrences = (text: string, part: string): number => text.split(part).length - 1

afterEach(() => {
  process.exitCode = undefined
})

describe('the snippets, with the placeholder', () => {
  const input = { url: URL_LOCAL, serverName: 'sallyport' }

  it('desktop: mcpServers, type http, url, the Authorization header', () => {
    expect(JSON.parse(renderSnippet('desktop', input))).toEqual({
      mcpServers: {
        sallyport: { type: 'http', url: URL_LOCAL, headers: { Authorization: `Bearer ${KEY_PLACEHOLDER}` } },
      },
    })
  })

  it('vscode: servers with type http, the key from a password input VS Code asks for', () => {
    expect(JSON.parse(renderSnippet('vscode', input))).toEqual({
      inputs: [
        {
          type: 'promptString',
          id: 'sallyport-key',
          description: 'sallyport key (`sallyport credential add <name> <policy>` prints one)',
          password: true,
        },
      ],
      servers: {
        sallyport: {
          type: 'http',
          url: URL_LOCAL,
          headers: { Authorization: `Bearer \${input:sallyport-key}` },
        },
      },
    })
  })

  it('cursor: mcpServers with url and headers (no type: Cursor infers the transport)', () => {
    expect(JSON.parse(renderSnippet('cursor', input))).toEqual({
      mcpServers: { sallyport: { url: URL_LOCAL, headers: { Authorization: `Bearer ${KEY_PLACEHOLDER}` } } },
    })
  })

  it('inspector: one shell line, pinned package, http transport, the header, --stored-auth-only, tools/list', () => {
    const line = renderSnippet('inspector', input)
    expect(line).toBe(
      `npx ${INSPECTOR_PACKAGE} --cli ${URL_LOCAL} --transport http --header "Authorization: Bearer ${KEY_PLACEHOLDER}" --stored-auth-only --method tools/list\n`,
    )
    expect(shellWords(line)).toEqual(inspectorCommand(input))
  })

  it('mcp-remote: npx -y, pinned package, http-only, the header without spaces, its value in env', () => {
    expect(JSON.parse(renderSnippet('mcp-remote', input))).toEqual({
      mcpServers: {
        sallyport: {
          command: 'npx',
          args: [
            '-y',
            MCP_REMOTE_PACKAGE,
            URL_LOCAL,
            '--transport',
            'http-only',
            '--header',
            `Authorization:\${AUTH_HEADER}`,
          ],
          env: { AUTH_HEADER: `Bearer ${KEY_PLACEHOLDER}` },
        },
      },
    })
  })

  it('the pinned versions are exact versions', () => {
    expect(INSPECTOR_PACKAGE).toMatch(/^@modelcontextprotocol\/inspector@\d+\.\d+\.\d+$/)
    expect(MCP_REMOTE_PACKAGE).toMatch(/^mcp-remote@\d+\.\d+\.\d+$/)
  })

  it('every JSON snippet is one pretty-printed object ending in a newline; --name renames the entry', () => {
    for (const client of ['desktop', 'vscode', 'cursor', 'mcp-remote'] as const) {
      const text = renderSnippet(client, { ...input, serverName: 'work-gw' })
      expect(text.endsWith('}\n')).toBe(true)
      expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`)
      const config = JSON.parse(text) as Record<string, Record<string, unknown>>
      expect(Object.keys(config.servers ?? config.mcpServers ?? {})).toEqual(['work-gw'])
    }
  })
})

describe('the snippets, with a key', () => {
  const input = { url: URL_LOCAL, serverName: 'sallyport', key: KEY }

  it.each(ALL)('%s holds the key exactly once and no placeholder', (client) => {
    const text = renderSnippet(client, input)
    expect(occurrences(text, KEY)).toBe(1)
    expect(text).not.toContain(KEY_PLACEHOLDER)
    expect(text).not.toContain('${input:')
  })

  it('vscode with a key has no inputs; the header is the key itself', () => {
    expect(clientConfig('vscode', input)).toEqual({
      servers: { sallyport: { type: 'http', url: URL_LOCAL, headers: { Authorization: `Bearer ${KEY}` } } },
    })
  })

  it('mcp-remote keeps the key out of the arguments (env only)', () => {
    const entry = (clientConfig('mcp-remote', input) as { mcpServers: Record<string, { args: string[] }> })
      .mcpServers.sallyport
    expect(entry?.args.join(' ')).not.toContain(KEY)
  })
})

describe('shell quoting', () => {
  it.each([
    ['plain', 'http://127.0.0.1:8787/mcp', 'http://127.0.0.1:8787/mcp'],
    ['space', 'Authorization: Bearer x', '"Authorization: Bearer x"'],
    ['dollar', 'a$b c', "'a$b c'"],
    ['single quote and dollar', "it's $x", `'it'\\''s $x'`],
    ['backtick', 'a`b', "'a`b'"],
    ['bang', 'a!b', "'a!b'"],
  ])('%s', (_name, word, quoted) => {
    expect(shellWord(word)).toBe(quoted)
    expect(shellWords(shellWord(word))).toEqual([word])
  })

  it('a URL with an IPv6 host and an awkward path survives the shell', () => {
    const url = 'https://[::1]:8443/a%20b/mcp'
    const input = { url, serverName: 's', key: KEY }
    expect(shellWords(renderSnippet('inspector', input))).toEqual(inspectorCommand(input))
  })
})

describe('checkGatewayUrl (--url)', () => {
  it.each([
    ['https://gw.example.com/mcp', 'https://gw.example.com/mcp'],
    ['http://127.0.0.1:8787/mcp', 'http://127.0.0.1:8787/mcp'],
    ['HTTPS://GW.Example.com:443/sallyport/mcp', 'https://gw.example.com/sallyport/mcp'],
    ['http://[::1]:8787/mcp', 'http://[::1]:8787/mcp'],
    ['https://gw.example.com', 'https://gw.example.com/'],
  ])('accepts %s as %s', (value, normalised) => {
    expect(checkGatewayUrl(value)).toBe(normalised)
  })

  it.each([
    ['not-a-url', /absolute http or https/],
    ['not a url', /white space or control characters/],
    ['/mcp', /absolute http or https/],
    ['ftp://gw.example.com/mcp', /http or https/],
    ['ws://gw.example.com/mcp', /http or https/],
    ['https://user:hunter2secret@gw.example.com/mcp', /user or password/],
    ['https://gw.example.com/mcp?token=hunter2secret', /query or a fragment/],
    ['https://gw.example.com/mcp?', /query or a fragment/],
    ['https://gw.example.com/mcp#x', /query or a fragment/],
    [`https://gw.example.com/${'a'.repeat(2050)}`, /longer than 2048/],
  ])('refuses %s (usage), never repeating the value', (value, reason) => {
    let error: unknown
    try {
      checkGatewayUrl(value)
    } catch (caught) {
      error = caught
    }
    expect(CliError.isInstance(error) && error.code).toBe('ERR_CLI_USAGE')
    expect((error as Error).message).toMatch(reason)
    expect((error as Error).message).not.toContain('hunter2secret')
  })
})

describe('names', () => {
  it.each([
    ['desktop', 'desktop'],
    ['claude-code', 'desktop'],
    ['vscode', 'vscode'],
    ['code', 'vscode'],
    ['cursor', 'cursor'],
    ['inspector', 'inspector'],
    ['mcp-inspector', 'inspector'],
    ['mcp-remote', 'mcp-remote'],
    ['stdio', 'mcp-remote'],
    ['claude-desktop', 'mcp-remote'],
  ])('client %s is %s', (name, client) => {
    expect(resolveClient(name)).toBe(client)
  })

  it('an unknown client is a usage error listing every client', () => {
    expect(() => resolveClient('emacs')).toThrow(
      'unknown client "emacs": choose desktop, vscode, cursor, inspector, mcp-remote (see sallyport connect --help)',
    )
    expect(CONNECT_CLIENTS.map((c) => c.client)).toEqual(ALL)
  })

  it.each(['sallyport', 'gw_2', 'A-b'])('server name %s is fine', (name) => {
    expect(checkServerName(name)).toBe(name)
  })

  it.each(['', '2gw', 'a b', 'a.b', 'x'.repeat(65), '$(id)'])('server name %j is refused', (name) => {
    expect(() => checkServerName(name)).toThrow(/--name must be/)
  })
})

describe('mcp-remote and plain http', () => {
  it.each([
    ['http://127.0.0.1:8787/mcp', false],
    ['http://localhost:8787/mcp', false],
    ['https://gw.example.com/mcp', false],
    ['http://[::1]:8787/mcp', true],
    ['http://192.168.1.20:8787/mcp', true],
  ])('%s needs --allow-http: %s', (url, needed) => {
    expect(mcpRemoteNeedsAllowHttp(url)).toBe(needed)
    const args = (
      clientConfig('mcp-remote', { url, serverName: 's' }) as {
        mcpServers: { s: { args: string[] } }
      }
    ).mcpServers.s.args
    expect(args.includes('--allow-http')).toBe(needed)
    expect(args.indexOf(url)).toBe(2)
  })
})

describe('notes (stderr)', () => {
  const notes = (client: ConnectClient, url: string, credential?: { username: string; policy: string }) =>
    connectNotes(client, { url, urlFrom: '--url', serverName: 'sallyport', credential }).join('\n')

  it('say how to get a key, or that the snippet holds a new one', () => {
    expect(notes('cursor', URL_LOCAL)).toContain(
      "Replace <SALLYPORT_KEY> with a key of the client's own: `sallyport credential add <name> chat|read|full` prints one",
    )
    expect(notes('vscode', URL_LOCAL)).toContain(
      '`sallyport credential add <name> chat|read|full` prints one',
    )
    expect(notes('cursor', URL_LOCAL, { username: 'ide', policy: 'read' })).toContain(
      'Created credential ide (policy read). Its key is inside the snippet above and shown nowhere else',
    )
  })

  it('warn about plain http to another host, and about a path that is not /mcp', () => {
    expect(notes('desktop', 'http://gw.lan:8787/mcp')).toMatch(/Warning: plain http/)
    expect(notes('desktop', 'http://127.0.0.1:8787/mcp')).not.toMatch(/Warning/)
    expect(notes('desktop', 'https://gw.example.com/')).toMatch(
      /serves MCP at \/mcp; make sure \/ reaches it/,
    )
    expect(notes('mcp-remote', 'http://gw.lan:8787/mcp')).toMatch(/--allow-http: mcp-remote refuses/)
  })

  it('name Claude Desktop as a case for mcp-remote, and the Inspector flag', () => {
    expect(notes('desktop', URL_LOCAL)).toMatch(
      /claude_desktop_config\.json, need `sallyport connect mcp-remote`/,
    )
    expect(notes('inspector', URL_LOCAL)).toMatch(/--stored-auth-only: a refused key ends the run \(exit 3/)
  })
})

describe('connect (in process, against a stack)', () => {
  it("takes the URL from the stack's sallyport.json and prints the snippet alone on stdout", async () => {
    const io = collect()
    await connect({ dir: stack.dir, client: 'desktop' }, io)
    const url = `http://127.0.0.1:${stack.gatewayPort}/mcp`
    expect(JSON.parse(io.stdout()).mcpServers.sallyport.url).toBe(url)
    expect(io.stderr()).toContain(`Gateway: ${url} (from sallyport.json;`)
  })

  it('a wildcard bind (SALLYPORT_GATEWAY_HOST=0.0.0.0, the image) is reached on loopback', async () => {
    const io = collect({ SALLYPORT_GATEWAY_HOST: '0.0.0.0' })
    await connect({ dir: stack.dir, client: 'inspector' }, io)
    expect(io.stdout()).toContain(` http://127.0.0.1:${stack.gatewayPort}/mcp `)
  })

  it('an IPv6 loopback bind gives a bracketed URL, and mcp-remote gets --allow-http for it', async () => {
    const io = collect({ SALLYPORT_GATEWAY_HOST: '::1' })
    await connect({ dir: stack.dir, client: 'mcp-remote' }, io)
    const entry = JSON.parse(io.stdout()).mcpServers.sallyport
    expect(entry.args.slice(2, 4)).toEqual([`http://[::1]:${stack.gatewayPort}/mcp`, '--allow-http'])
  })

  it('--url overrides the stack and needs none', async () => {
    const io = collect()
    await connect(
      { dir: join(stack.root, 'no-stack-here'), client: 'cursor', url: 'https://gw.example.com/mcp' },
      io,
    )
    expect(JSON.parse(io.stdout()).mcpServers.sallyport.url).toBe('https://gw.example.com/mcp')
    expect(io.stderr()).toContain('Gateway: https://gw.example.com/mcp (from --url).')
  })

  it('without --url a missing stack is ERR_CLI_STACK_MISSING (exit 3)', async () => {
    await expect(
      connect({ dir: join(stack.root, 'nowhere'), client: 'cursor' }, collect()),
    ).rejects.toMatchObject({ code: 'ERR_CLI_STACK_MISSING' })
  })

  it('a broken sallyport.json is ERR_CLI_CONFIG_INVALID', async () => {
    const backup = readFileSync(join(stack.dir, 'sallyport.json'), 'utf8')
    try {
      editConfig(stack.dir, (c) => {
        c.gateway.port = 'eighty'
      })
      await expect(connect({ dir: stack.dir, client: 'desktop' }, collect())).rejects.toMatchObject({
        code: 'ERR_CLI_CONFIG_INVALID',
      })
    } finally {
      editConfig(stack.dir, (c) => Object.assign(c, JSON.parse(backup)))
    }
  })

  it('--credential creates the credential (default chat); its key is in the snippet once and nowhere else', async () => {
    const io = collect()
    await connect({ dir: stack.dir, client: 'vscode', credential: 'ide' }, io)
    const key = readFileSync(join(stack.dir, 'state/credentials/ide/key'), 'utf8').trim()
    expect(key).toMatch(/^agk_/)
    expect(occurrences(io.stdout(), key)).toBe(1)
    expect(io.stderr()).not.toContain(key)
    expect(io.stderr()).toContain('Created credential ide (policy chat).')
    expect(JSON.parse(io.stdout()).servers.sallyport.headers.Authorization).toBe(`Bearer ${key}`)
    const meta = JSON.parse(readFileSync(join(stack.dir, 'state/credentials/ide/meta.json'), 'utf8'))
    expect(meta.policy).toBe('chat')
  })

  it('--policy sets the policy; an existing name is refused (ERR_CREDENTIALS_EXISTS) and prints nothing', async () => {
    const io = collect()
    await connect({ dir: stack.dir, client: 'cursor', credential: 'reader-ide', policy: 'read' }, io)
    expect(io.stderr()).toContain('Created credential reader-ide (policy read).')
    const again = collect()
    const failure = connect({ dir: stack.dir, client: 'desktop', credential: 'reader-ide' }, again)
    await expect(failure).rejects.toSatisfy(
      (e) => CredentialError.isInstance(e) && e.code === 'ERR_CREDENTIALS_EXISTS',
    )
    expect(again.stdout()).toBe('')
    expect(again.stderr()).toBe('')
  })

  it('checks everything before creating a credential', async () => {
    const bad: Array<[Partial<Parameters<typeof connect>[0]>, RegExp]> = [
      [{ client: 'emacs' }, /unknown client/],
      [{ client: 'cursor', url: 'ftp://x/mcp' }, /--url/],
      [{ client: 'cursor', name: '1x' }, /--name/],
      [{ client: 'cursor', policy: 'root' }, /policy must be chat, read or full/],
    ]
    for (const [options, message] of bad) {
      await expect(
        connect({ dir: stack.dir, client: 'cursor', credential: 'never-made', ...options }, collect()),
      ).rejects.toThrow(message)
    }
    expect(existsSync(join(stack.dir, 'state/credentials/never-made'))).toBe(false)
  })

  it('--policy without --credential is a usage error', async () => {
    await expect(connect({ dir: stack.dir, client: 'cursor', policy: 'full' }, collect())).rejects.toThrow(
      '--policy goes with --credential <name>',
    )
  })

  it('--json: one object with the snippet, the notes and the credential; the key once', async () => {
    const io = collect()
    await connect(
      { dir: stack.dir, client: 'inspector', credential: 'json-bot', policy: 'full', json: true },
      io,
    )
    expect(io.stderr()).toBe('')
    const result = JSON.parse(io.stdout())
    expect(result).toMatchObject({
      client: 'inspector',
      url: `http://127.0.0.1:${stack.gatewayPort}/mcp`,
      serverName: 'sallyport',
      credential: { username: 'json-bot', policy: 'full' },
    })
    const key = readFileSync(join(stack.dir, 'state/credentials/json-bot/key'), 'utf8').trim()
    expect(occurrences(io.stdout(), key)).toBe(1)
    expect(result.snippet).toBe(renderSnippet('inspector', { url: result.url, serverName: 'sallyport', key }))
    expect(result.notes.join('\n')).toContain('Created credential json-bot (policy full).')
  })
})

describe('sallyport connect (the parser)', () => {
  async function run(args: string[]): Promise<{ code: number; out: string; err: string; log: string }> {
    const io = collect()
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    try {
      const code = await main(['connect', ...args, '--dir', stack.dir], io)
      return { code, out: io.stdout(), err: io.stderr(), log: log.mock.calls.flat().join('\n') }
    } finally {
      log.mockRestore()
    }
  }

  it('--help lists every client with its aliases and one line, and examples', async () => {
    const { code, log } = await run(['--help'])
    expect(code).toBe(0)
    for (const entry of CONNECT_CLIENTS) {
      expect(log).toContain(`  ${[entry.client, ...entry.aliases].join(', ')}\n      ${entry.summary}`)
    }
    expect(log).toContain('sallyport connect vscode > .vscode/mcp.json')
    expect(log).toContain('sallyport credential add <name> <policy>')
  })

  it('an unknown client: exit 2 and the known ones', async () => {
    const { code, out, err } = await run(['emacs'])
    expect(code).toBe(2)
    expect(out).toBe('')
    expect(err).toBe(
      'sallyport: unknown client "emacs": choose desktop, vscode, cursor, inspector, mcp-remote (see sallyport connect --help)\n',
    )
  })

  it('no client, or an unknown policy: exit 2', async () => {
    expect((await run([])).code).toBe(2)
    const policy = await run(['cursor', '--credential', 'x1', '--policy', 'root'])
    expect(policy.code).toBe(2)
    expect(policy.err).toMatch(/Invalid values|choices/i)
  })

  it('wires every flag: --url, --name, --credential, --policy, --json', async () => {
    const { code, out } = await run([
      'desktop',
      '--url',
      'https://gw.example.com/team/mcp',
      '--name',
      'team-gw',
      '--credential',
      'wired',
      '--policy',
      'read',
      '--json',
    ])
    expect(code).toBe(0)
    const result = JSON.parse(out)
    expect(result).toMatchObject({
      client: 'desktop',
      url: 'https://gw.example.com/team/mcp',
      serverName: 'team-gw',
      credential: { username: 'wired', policy: 'read' },
    })
    expect(JSON.parse(result.snippet).mcpServers['team-gw'].url).toBe('https://gw.example.com/team/mcp')
  })

  it('an existing credential name: exit 5, nothing on stdout, no key on stderr', async () => {
    expect((await run(['cursor', '--credential', 'twice'])).code).toBe(0)
    const second = await run(['mcp-remote', '--credential', 'twice'])
    expect(second.code).toBe(5)
    expect(second.out).toBe('')
    expect(second.err).toMatch(/^sallyport: .*already exists/)
    expect(second.err).not.toMatch(/agk_/)
  })
})

describe('connect: black-box review findings', () => {
  it('refuses a --url with white space or control characters instead of repairing it', () => {
    for (const value of [
      'https://gw.example.com/mcp\nrm -rf ~',
      'https://gw.example.com/m cp',
      'https://gw.example.com/mcp\t',
    ])
      expect(() => checkGatewayUrl(value)).toThrow(/white space or control characters/)
  })
})
