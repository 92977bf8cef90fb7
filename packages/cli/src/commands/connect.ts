import type { Policy } from '@sallyport/credentials'
import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { overridesFromEnv } from '../stack/layout.ts'
import { requireStack } from '../stack/require-stack.ts'
import { loadStackConfig } from '../stack/stack-config.ts'
import { resolveStackPlan } from '../stack/stack-plan.ts'
import { addCredential } from './credential.ts'

// `sallyport connect <client>`: a ready-to-paste configuration that connects a common MCP client
// to this stack's gateway. The snippet is the only thing on stdout (so `> .vscode/mcp.json`
// works); what to do with it goes to stderr. Every snippet is fed to the real client in
// packages/peer-tests/test/connect.test.ts, so a shape or a flag that stops working fails there.

/** The clients `sallyport connect` writes a configuration for. */
export type ConnectClient = 'desktop' | 'vscode' | 'cursor' | 'inspector' | 'mcp-remote'

/** One client: its name, the other names it answers to, and its line in `connect --help`. */
export interface ConnectClientEntry {
  readonly client: ConnectClient
  readonly aliases: readonly string[]
  readonly summary: string
}

export const CONNECT_CLIENTS: readonly ConnectClientEntry[] = [
  {
    client: 'desktop',
    aliases: ['claude-code'],
    summary: '"mcpServers" with type "http", url, headers (Claude Code\'s .mcp.json and the like)',
  },
  {
    client: 'vscode',
    aliases: ['code'],
    summary: '.vscode/mcp.json: "servers" with type "http", url, headers; VS Code asks for the key',
  },
  {
    client: 'cursor',
    aliases: [],
    summary: '.cursor/mcp.json or ~/.cursor/mcp.json: "mcpServers" with url, headers',
  },
  {
    client: 'inspector',
    aliases: ['mcp-inspector'],
    summary: "the MCP Inspector CLI command that lists the gateway's tools (Node >= 22.19)",
  },
  {
    client: 'mcp-remote',
    aliases: ['stdio', 'claude-desktop'],
    summary: '"mcpServers" running mcp-remote, for apps that start only local (stdio) servers',
  },
]

/** What a snippet without a key carries where the key goes (never a valid key: the gateway answers 401). */
export const KEY_PLACEHOLDER = '<SALLYPORT_KEY>'
/** The id of the VS Code input that asks for the key (`${input:sallyport-key}`). */
export const VSCODE_KEY_INPUT = 'sallyport-key'
/** The Inspector the printed command line runs: the version its flags were tested with. */
export const INSPECTOR_PACKAGE = '@modelcontextprotocol/inspector@2.12.0'
/** The mcp-remote the printed configuration runs: the version it was tested with. */
export const MCP_REMOTE_PACKAGE = 'mcp-remote@0.15.1'
/** The variable mcp-remote substitutes into its `--header` argument (its documented form). */
export const MCP_REMOTE_HEADER_ENV = 'AUTH_HEADER'
export const DEFAULT_SERVER_NAME = 'sallyport'
const DEFAULT_POLICY: Policy = 'chat'

/** The client named `name` (its name or an alias); `ERR_CLI_USAGE` listing the known ones otherwise. */
export function resolveClient(name: string): ConnectClient {
  const entry = CONNECT_CLIENTS.find((c) => c.client === name || c.aliases.includes(name))
  if (entry) return entry.client
  throw new CliError(
    'ERR_CLI_USAGE',
    `unknown client ${JSON.stringify(name.slice(0, 40))}: choose ${CONNECT_CLIENTS.map((c) => c.client).join(', ')} (see sallyport connect --help)`,
  )
}

/** The lines of `connect --help` that list the clients: each name (and aliases), its summary below. */
export function clientsHelp(): string {
  return [
    'Clients:',
    ...CONNECT_CLIENTS.flatMap((c) => [`  ${[c.client, ...c.aliases].join(', ')}`, `      ${c.summary}`]),
    '',
    `Without --credential the key is a placeholder (${KEY_PLACEHOLDER}; VS Code asks for it instead):`,
    'the gateway answers 401 until a key replaces it. `sallyport credential add <name> <policy>`',
    'prints one.',
  ].join('\n')
}

/**
 * The `--url` an operator gave, checked: an absolute http(s) URL without user, password, query or
 * fragment (the key travels in the Authorization header, nowhere else). Returned normalised. The
 * value itself is never repeated in an error.
 */
export function checkGatewayUrl(value: string): string {
  const bad = (why: string): CliError =>
    new CliError('ERR_CLI_USAGE', `--url ${why} (e.g. https://gw.example.com/mcp)`)
  if (value.length > 2048) throw bad('is longer than 2048 characters')
  // The URL parser would silently drop these (and encode spaces): refused, not repaired.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u0020\u007f-\u009f]/.test(value))
    throw bad('must not contain white space or control characters')
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw bad('must be an absolute http or https URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('must be an http or https URL')
  if (url.username !== '' || url.password !== '')
    throw bad('must not carry a user or password (the key goes into the Authorization header)')
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#'))
    throw bad('must not have a query or a fragment')
  return url.href
}

/** `name` as the entry's key in the client's configuration: a letter, then letters, digits, `_`, `-`. */
export function checkServerName(name: string): string {
  if (/^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(name)) return name
  throw new CliError(
    'ERR_CLI_USAGE',
    '--name must be a letter followed by up to 63 letters, digits, "_" or "-" (VS Code\'s rule for server names)',
  )
}

/** What a snippet is made of. */
export interface SnippetInput {
  /** The gateway's MCP endpoint (checked). */
  readonly url: string
  /** The entry's name in the client's configuration. */
  readonly serverName: string
  /** The key to put in; without it, a placeholder. */
  readonly key?: string | undefined
}

/** True when mcp-remote needs `--allow-http` for `url` (it allows plain http to localhost and 127.0.0.1 only). */
export function mcpRemoteNeedsAllowHttp(url: string): boolean {
  const { protocol, hostname } = new URL(url)
  return protocol === 'http:' && hostname !== 'localhost' && hostname !== '127.0.0.1'
}

/** The Inspector CLI's argument vector (the first word is `npx`). */
export function inspectorCommand(input: SnippetInput): string[] {
  return [
    'npx',
    INSPECTOR_PACKAGE,
    '--cli',
    input.url,
    '--transport',
    'http',
    '--header',
    `Authorization: Bearer ${input.key ?? KEY_PLACEHOLDER}`,
    // Without it, the Inspector answers a 401 by starting an interactive OAuth login instead of
    // reporting the refused key (exit 3, auth_required).
    '--stored-auth-only',
    '--method',
    'tools/list',
  ]
}

/**
 * One word for a POSIX shell: as it is when it holds no special character, else in double quotes
 * (which PowerShell and cmd read the same way) when nothing in it is special inside them, else in
 * single quotes.
 */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word
  if (!/["$`\\!\n]/.test(word)) return `"${word}"`
  return `'${word.replaceAll("'", `'\\''`)}'`
}

/** The configuration object of a JSON client. */
export function clientConfig(client: Exclude<ConnectClient, 'inspector'>, input: SnippetInput): object {
  const bearer = `Bearer ${input.key ?? KEY_PLACEHOLDER}`
  switch (client) {
    case 'desktop':
      return {
        mcpServers: {
          [input.serverName]: { type: 'http', url: input.url, headers: { Authorization: bearer } },
        },
      }
    case 'vscode': {
      const server = (authorization: string) => ({
        type: 'http',
        url: input.url,
        headers: { Authorization: authorization },
      })
      if (input.key !== undefined) return { servers: { [input.serverName]: server(bearer) } }
      // No key: VS Code asks for it once and keeps it in its secret storage, so the file (often
      // committed with the workspace) never holds it.
      return {
        inputs: [
          {
            type: 'promptString',
            id: VSCODE_KEY_INPUT,
            description: 'sallyport key (`sallyport credential add <name> <policy>` prints one)',
            password: true,
          },
        ],
        servers: { [input.serverName]: server(`Bearer \${input:${VSCODE_KEY_INPUT}}`) },
      }
    }
    case 'cursor':
      return { mcpServers: { [input.serverName]: { url: input.url, headers: { Authorization: bearer } } } }
    case 'mcp-remote':
      return {
        mcpServers: {
          [input.serverName]: {
            command: 'npx',
            args: [
              '-y',
              MCP_REMOTE_PACKAGE,
              input.url,
              ...(mcpRemoteNeedsAllowHttp(input.url) ? ['--allow-http'] : []),
              '--transport',
              'http-only',
              '--header',
              // mcp-remote's documented form: no space in the argument (some clients do not
              // escape spaces inside args), the value with its space comes from the environment.
              `Authorization:\${${MCP_REMOTE_HEADER_ENV}}`,
            ],
            env: { [MCP_REMOTE_HEADER_ENV]: bearer },
          },
        },
      }
  }
}

/** Exactly what `sallyport connect <client>` prints on stdout. */
export function renderSnippet(client: ConnectClient, input: SnippetInput): string {
  if (client === 'inspector') return `${inspectorCommand(input).map(shellWord).join(' ')}\n`
  return `${JSON.stringify(clientConfig(client, input), null, 2)}\n`
}

/** Where the snippet goes and what to know about it: the lines printed on stderr. */
export function connectNotes(
  client: ConnectClient,
  context: {
    readonly url: string
    readonly urlFrom: 'sallyport.json' | '--url'
    readonly serverName: string
    readonly credential?: { readonly username: string; readonly policy: string } | undefined
  },
): string[] {
  const notes: string[] = []
  const entry = `the "${context.serverName}" entry`
  switch (client) {
    case 'desktop':
      notes.push(
        `Add ${entry} to the mcpServers of your client's configuration (Claude Code: .mcp.json in the project; other assistants that take a remote Streamable HTTP server with headers).`,
        "Apps whose configuration file only starts local (stdio) programs, such as Claude Desktop's claude_desktop_config.json, need `sallyport connect mcp-remote` instead.",
      )
      break
    case 'vscode':
      notes.push(
        'Save it as .vscode/mcp.json (`sallyport connect vscode > .vscode/mcp.json`), or merge its "servers" entry into an existing mcp.json.',
        context.credential
          ? 'The key is inside the file: keep .vscode/mcp.json out of version control.'
          : `VS Code asks for the key once (input "${VSCODE_KEY_INPUT}") and keeps it in its secret storage, not in the file.`,
      )
      break
    case 'cursor':
      notes.push(
        `Save it as .cursor/mcp.json in the project or ~/.cursor/mcp.json, or merge ${entry} into the mcpServers of an existing one.`,
      )
      break
    case 'inspector':
      notes.push(
        "Run it in a shell (the Inspector needs Node >= 22.19); it prints the gateway's tools.",
        '--stored-auth-only: a refused key ends the run (exit 3, auth_required) instead of starting an interactive OAuth login.',
      )
      if (context.credential)
        notes.push(
          'The key is on this command line: a shell keeps it in its history and other local users can see it in the process list while it runs. Prefer a shell variable read without echo (read -rs SALLYPORT_KEY) in its place, or clear the history line.',
        )
      break
    case 'mcp-remote':
      notes.push(
        `Add ${entry} to the mcpServers of the app's configuration (Claude Desktop: claude_desktop_config.json). mcp-remote runs beside the app and forwards its stdio to the gateway.`,
        `The header argument has no space (some apps do not escape spaces inside args); its value comes from ${MCP_REMOTE_HEADER_ENV} in "env", mcp-remote fills it in.`,
      )
      if (mcpRemoteNeedsAllowHttp(context.url))
        notes.push(
          '--allow-http: mcp-remote refuses plain http to hosts other than localhost and 127.0.0.1 without it.',
        )
      break
  }
  notes.push(
    `Gateway: ${context.url} (${
      context.urlFrom === '--url'
        ? 'from --url'
        : 'from sallyport.json; behind a proxy, a TLS terminator or a published container port, pass the URL clients use with --url'
    }).`,
  )
  const { protocol, hostname, pathname } = new URL(context.url)
  if (protocol === 'http:' && !isLoopbackHost(hostname))
    notes.push(
      'Warning: plain http to a host other than this machine: the key crosses the network unencrypted. Put a TLS terminator in front of the gateway and pass its https URL with --url.',
    )
  if (!pathname.endsWith('/mcp'))
    notes.push(`Note: the gateway serves MCP at /mcp; make sure ${pathname} reaches it.`)
  if (context.credential) {
    notes.push(
      `Created credential ${context.credential.username} (policy ${context.credential.policy}). Its key is inside the snippet above and shown nowhere else: store the snippet now.`,
    )
  } else if (client !== 'vscode') {
    notes.push(
      `Replace ${KEY_PLACEHOLDER} with a key of the client's own: \`sallyport credential add <name> chat|read|full\` prints one (or run \`sallyport connect ${client} --credential <name>\` to create it inside the snippet). Until then the gateway answers 401.`,
    )
  } else {
    notes.push(
      `A key: \`sallyport credential add <name> chat|read|full\` prints one (or \`sallyport connect vscode --credential <name>\` puts a new one in the file).`,
    )
  }
  return notes
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname)
}

/** Options of {@link connect}. */
export interface ConnectOptions {
  readonly dir: string
  /** A client's name or alias. */
  readonly client: string
  /** The gateway's MCP URL as clients reach it (default: from the stack's sallyport.json). */
  readonly url?: string | undefined
  /** Create this credential and put its key into the snippet. */
  readonly credential?: string | undefined
  /** The policy of `credential` (default chat). */
  readonly policy?: string | undefined
  /** The entry's name in the client's configuration (default sallyport). */
  readonly name?: string | undefined
  readonly json?: boolean | undefined
}

/** The stack's gateway MCP URL as a client on this machine reaches it (a wildcard bind means loopback). */
async function stackMcpUrl(dir: string, env: NodeJS.ProcessEnv): Promise<string> {
  const layout = await requireStack(dir, overridesFromEnv(env))
  const config = await loadStackConfig(layout.configFile)
  return resolveStackPlan({ layout, config, env, recorded: new Map() }).gateway.mcpUrl
}

/**
 * `sallyport connect <client>`: prints the snippet on stdout and what to do with it on stderr
 * (with `--json`, one object holding both). With `credential`, creates that credential first
 * (refused with exit 5 when the name exists) and its key appears once, inside the snippet, and
 * nowhere else. Everything is checked before the credential is created.
 */
export async function connect(options: ConnectOptions, io: Io): Promise<void> {
  const client = resolveClient(options.client)
  const serverName = checkServerName(options.name ?? DEFAULT_SERVER_NAME)
  if (options.policy !== undefined && options.credential === undefined)
    throw new CliError('ERR_CLI_USAGE', '--policy goes with --credential <name> (the credential to create)')
  const urlFrom = options.url === undefined ? 'sallyport.json' : '--url'
  const url =
    options.url === undefined ? await stackMcpUrl(options.dir, io.env) : checkGatewayUrl(options.url)
  const issued =
    options.credential === undefined
      ? undefined
      : await addCredential(options.dir, options.credential, options.policy ?? DEFAULT_POLICY)
  const credential = issued && { username: issued.username, policy: issued.policy }
  const snippet = renderSnippet(client, { url, serverName, key: issued?.key })
  const notes = connectNotes(client, { url, urlFrom, serverName, credential })
  if (options.json) {
    io.out(`${JSON.stringify({ client, url, serverName, credential: credential ?? null, snippet, notes })}\n`)
    return
  }
  io.out(snippet)
  io.err(`${notes.join('\n')}\n`)
}
