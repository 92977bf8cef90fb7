import { DEFAULT_OAUTH_ALGORITHMS, OAUTH_ALGORITHMS } from '@sallyport/gateway-server/config'
import yargs, { type Argv } from 'yargs'
import { configOAuth } from './commands/config-oauth.ts'
import { clientsHelp, connect } from './commands/connect.ts'
import {
  credentialAdd,
  credentialList,
  credentialMapOAuth,
  credentialRemove,
  credentialRotate,
  credentialSetPolicy,
} from './commands/credential.ts'
import { formatInitResult, initStack } from './commands/init.ts'
import {
  presetCheck,
  presetDisable,
  presetModels,
  presetSave,
  presetSignout,
  presetUse,
  readKeyFromStdin,
} from './commands/preset.ts'
import { envCommands, taskCommands } from './commands/task-cli.ts'
import { CliError } from './errors.ts'
import { describeFailure, EXIT } from './exit-codes.ts'
import type { Io } from './io.ts'
import { commandsWithRuntime } from './main-runtime.ts'
import { stackDir } from './stack-dir.ts'

/** The CLI's version (the package's). */
export const CLI_VERSION = '0.1.0'

const dirOption = {
  type: 'string',
  describe: 'The stack directory (default: $SALLYPORT_DIR, else the current directory)',
} as const

const jsonOption = { type: 'boolean', default: false, describe: 'Print machine-readable JSON' } as const

function credentialCommands(y: Argv, io: Io): Argv {
  return y
    .command(
      'add <username> <policy>',
      'Create a credential; prints its key once, to stdout',
      (c) =>
        c
          .positional('username', {
            type: 'string',
            demandOption: true,
            describe: 'Lowercase name, e.g. ci-bot',
          })
          .positional('policy', { type: 'string', demandOption: true, choices: ['chat', 'read', 'full'] })
          .option('json', jsonOption)
          .example('$0 credential add ci-bot read', 'Add a read credential; the key is the only stdout line')
          .example('KEY=$($0 credential add ci-bot read)', 'Capture the key in a script'),
      (a) =>
        credentialAdd({ dir: stackDir(a, io), username: a.username, policy: a.policy, json: a.json }, io),
    )
    .command(
      'set-policy <username> <policy>',
      'Change the policy of a credential (identity, key and sessions stay)',
      (c) =>
        c
          .positional('username', { type: 'string', demandOption: true })
          .positional('policy', { type: 'string', demandOption: true, choices: ['chat', 'read', 'full'] })
          .option('json', jsonOption)
          .example('$0 credential set-policy discord read', 'Let the discord bot read the workspace'),
      (a) =>
        credentialSetPolicy(
          { dir: stackDir(a, io), username: a.username, policy: a.policy, json: a.json },
          io,
        ),
    )
    .command(
      'rotate <username>',
      'Replace the key of a credential; prints the new key once',
      (c) =>
        c
          .positional('username', { type: 'string', demandOption: true })
          .option('json', jsonOption)
          .example('$0 credential rotate owner', 'New owner key; sessions stay reachable'),
      (a) => credentialRotate({ dir: stackDir(a, io), username: a.username, json: a.json }, io),
    )
    .command(
      'remove <username>',
      'Delete a credential and its OAuth mappings',
      (c) =>
        c
          .positional('username', { type: 'string', demandOption: true })
          .option('json', jsonOption)
          .example('$0 credential remove slack', 'Revoke the slack credential'),
      (a) => credentialRemove({ dir: stackDir(a, io), username: a.username, json: a.json }, io),
    )
    .command(
      'list',
      'List credentials (never their keys) and OAuth mappings',
      (c) => c.option('json', jsonOption).example('$0 credential list --json', 'For scripts'),
      (a) => credentialList({ dir: stackDir(a, io), json: a.json }, io),
    )
    .command(
      'map <kind> <issuer> <subject> <username>',
      'Map an OAuth (issuer, subject) pair to a credential',
      (c) =>
        c
          .positional('kind', { type: 'string', demandOption: true, choices: ['oauth'] })
          .positional('issuer', { type: 'string', demandOption: true, describe: 'Exact issuer URL' })
          .positional('subject', { type: 'string', demandOption: true, describe: 'Exact `sub` claim' })
          .positional('username', { type: 'string', demandOption: true })
          .option('json', jsonOption)
          .example(
            '$0 credential map oauth https://id.example.com 248289761001 owner',
            'Tokens of that subject act as owner',
          ),
      (a) =>
        credentialMapOAuth(
          { dir: stackDir(a, io), issuer: a.issuer, subject: a.subject, username: a.username, json: a.json },
          io,
        ),
    )
    .demandCommand(1, 'Choose a credential command: add, set-policy, rotate, remove, list, map oauth')
}

const BASE_URL_HELP =
  "The server's OpenAI-compatible base URL, usually ending in /v1. localhost means the assistant runtime's own machine (in the container: the container, not the host); a server listening on the host's loopback only is not reachable from a bridged container. sallyport never starts or reconfigures the model server."

function presetCommands(y: Argv, io: Io): Argv {
  return y
    .command(
      'save <id>',
      'Save (or update) a preset in the running assistant runtime; --key-stdin stores its API key',
      (c) =>
        c
          .positional('id', {
            type: 'string',
            demandOption: true,
            describe: 'Provider id, e.g. local (lower case)',
          })
          .option('name', { type: 'string', demandOption: true, describe: 'Display name of the server' })
          .option('base-url', { type: 'string', demandOption: true, describe: BASE_URL_HELP })
          .option('model', {
            type: 'string',
            demandOption: true,
            describe: 'The model id as the server names it',
          })
          .option('model-name', { type: 'string', describe: 'Display name of the model (default: its id)' })
          .option('key-stdin', {
            type: 'boolean',
            default: false,
            describe: 'Read the API key from standard input (never from arguments or the environment)',
          })
          .option('json', jsonOption)
          .example(
            '$0 preset save local --name llama.cpp --base-url http://172.17.0.1:8080/v1 --model qwen2.5-coder:7b',
            'A server on the host, seen from the container',
          )
          .example(
            'printf %s "$KEY" | $0 preset save corp --name "Corp gateway" --base-url https://llm.corp.example/v1 --model gpt-4o-mini --key-stdin',
            'A server that needs a key',
          ),
      async (a) =>
        presetSave(
          {
            dir: stackDir(a, io),
            id: a.id,
            name: a.name,
            baseUrl: a['base-url'],
            model: a.model,
            modelName: a['model-name'],
            key: a['key-stdin'] ? await readKeyFromStdin(process.stdin) : undefined,
            json: a.json,
          },
          io,
        ),
    )
    .command(
      'use <id> <model>',
      'Make <id>/<model> the default model (refused when the operator policy file pins another one)',
      (c) =>
        c
          .positional('id', { type: 'string', demandOption: true })
          .positional('model', { type: 'string', demandOption: true })
          .option('json', jsonOption)
          .example('$0 preset use local qwen2.5-coder:7b', 'Use the saved preset by default'),
      (a) => presetUse({ dir: stackDir(a, io), id: a.id, model: a.model, json: a.json }, io),
    )
    .command(
      'disable <id>',
      'Disable a preset; its settings and key are kept (saving it again enables it)',
      (c) => c.positional('id', { type: 'string', demandOption: true }).option('json', jsonOption),
      (a) => presetDisable({ dir: stackDir(a, io), id: a.id, json: a.json }, io),
    )
    .command(
      'signout <id>',
      "Remove a preset's API key from the runtime's credential store; its settings are kept",
      (c) => c.positional('id', { type: 'string', demandOption: true }).option('json', jsonOption),
      (a) => presetSignout({ dir: stackDir(a, io), id: a.id, json: a.json }, io),
    )
    .command(
      'models <id>',
      "List the model ids the preset's server reports (one bounded GET <base URL>/models from here, beside the runtime)",
      (c) =>
        c
          .positional('id', { type: 'string', demandOption: true })
          .option('key-stdin', {
            type: 'boolean',
            default: false,
            describe: 'Read a key for the listing from standard input (not stored)',
          })
          .option('json', jsonOption)
          .example('$0 preset models local', 'What the llama.cpp server offers'),
      async (a) =>
        presetModels(
          {
            dir: stackDir(a, io),
            id: a.id,
            key: a['key-stdin'] ? await readKeyFromStdin(process.stdin) : undefined,
            json: a.json,
          },
          io,
        ),
    )
    .command(
      'check <id> [model]',
      'Ask the model one short question through the running runtime (proves inference, not tool calls); exit 9 if it does not answer',
      (c) =>
        c
          .positional('id', { type: 'string', demandOption: true })
          .positional('model', { type: 'string', describe: "Default: the preset's only model" })
          .option('json', jsonOption)
          .example('$0 preset check local', 'Does the llama.cpp model answer through the runtime?'),
      (a) => presetCheck({ dir: stackDir(a, io), id: a.id, model: a.model, json: a.json }, io),
    )
    .demandCommand(1, 'Choose a preset command: save, use, models, check, disable, signout')
}

/** Builds the parser. Every command is one exported function; this file only wires flags to them. */
export function buildParser(args: string[], io: Io): Argv {
  const parser = yargs(args)
    .scriptName('sallyport')
    // `env run user -- <command> [args…]`: what follows `--` is the command, kept apart.
    .parserConfiguration({ 'populate--': true })
    .usage(
      '$0 <command> [options]\n\nThe sallyport operator CLI: one stack directory, one configuration file (sallyport.json).',
    )
    .option('dir', dirOption)
    .command(
      'init',
      'Create the stack layout (idempotent: never overwrites a secret, a key or an edited file)',
      (c) =>
        c
          .option('json', jsonOption)
          .option('container', {
            type: 'boolean',
            default: false,
            describe:
              'A stack for the container image: a new sallyport.json binds the gateway to 0.0.0.0 (publish the port on the host loopback)',
          })
          .example('$0 init --dir ~/sallyport', 'Create a stack in ~/sallyport')
          .example('$0 init --dir ./stack --container', 'A stack for compose.yaml')
          .example('$0 init --dir ~/sallyport', 'Run again: reports everything as kept'),
      async (a) => {
        const result = await initStack({ dir: stackDir(a, io), env: io.env, container: a.container })
        io.out(a.json ? `${JSON.stringify(result)}\n` : formatInitResult(result))
      },
    )
    .command(
      'preset',
      'Local and custom AI servers (OpenAI-compatible), kept by the running assistant runtime',
      (c) => presetCommands(c, io),
    )
    .command('task', "Scheduled agent tasks (knowledge/tasks/<id>.yml), run by the stack's scheduler", (c) =>
      taskCommands(c, io),
    )
    .command('env', 'Run a command with the user environment (knowledge/env/user.env)', (c) =>
      envCommands(c, io),
    )
    .command('credential', 'Manage named credentials (bearer keys)', (c) =>
      credentialCommands(c, io).example('$0 credential add ci-bot read', 'Create a credential'),
    )
    .command(
      'connect <client>',
      "Print a ready-to-paste configuration that connects an MCP client to this stack's gateway (stdout: the snippet; stderr: where it goes)",
      (c) =>
        c
          .positional('client', {
            type: 'string',
            demandOption: true,
            describe: 'desktop, vscode, cursor, inspector or mcp-remote (see Clients below)',
          })
          .option('url', {
            type: 'string',
            describe:
              "The gateway's MCP URL as the client reaches it (default: from sallyport.json); e.g. behind a proxy or TLS terminator",
          })
          .option('credential', {
            type: 'string',
            describe:
              'Create this credential and put its key into the snippet (shown once, nowhere else; exit 5 when the name exists)',
          })
          .option('policy', {
            type: 'string',
            choices: ['chat', 'read', 'full'],
            describe: 'Policy of the --credential to create (default chat)',
          })
          .option('name', {
            type: 'string',
            default: 'sallyport',
            describe: "The server's name in the client's configuration",
          })
          .option('json', jsonOption)
          .example(
            '$0 connect vscode > .vscode/mcp.json',
            'VS Code asks for the key when it starts the server',
          )
          .example(
            '$0 connect cursor --credential cursor --policy read',
            'A new read credential, its key in the snippet',
          )
          .example(
            '$0 connect inspector --url https://gw.example.com/mcp',
            'The gateway behind a TLS terminator',
          )
          .example('$0 connect mcp-remote', "For Claude Desktop's claude_desktop_config.json")
          .epilogue(clientsHelp()),
      (a) =>
        connect(
          {
            dir: stackDir(a, io),
            client: a.client,
            url: a.url,
            credential: a.credential,
            policy: a.policy,
            name: a.name,
            json: a.json,
          },
          io,
        ),
    )
    .command('config', 'Change the stack configuration', (c) =>
      c
        .command(
          'oauth',
          'Enable OAuth bearer tokens (the gateway is a resource server only)',
          (o) =>
            o
              .option('resource', {
                type: 'string',
                demandOption: true,
                describe: 'HTTPS URL of the protected /mcp',
              })
              .option('issuer', { type: 'string', demandOption: true, describe: 'HTTPS issuer URL' })
              .option('jwks-url', {
                type: 'string',
                demandOption: true,
                describe: 'HTTPS URL of the signing keys',
              })
              .option('audience', {
                type: 'string',
                demandOption: true,
                describe: 'Expected audience, normally the resource URL',
              })
              .option('scopes', {
                type: 'string',
                array: true,
                default: [],
                describe: 'Required scopes (space/comma separated or repeated)',
              })
              .option('algorithms', {
                type: 'string',
                array: true,
                describe: `Allowed algorithms: ${OAUTH_ALGORITHMS.join(', ')} (default ${DEFAULT_OAUTH_ALGORITHMS.join(', ')})`,
              })
              .option('json', jsonOption)
              .example(
                '$0 config oauth --resource https://gw.example.com/mcp --issuer https://id.example.com --jwks-url https://id.example.com/jwks.json --audience https://gw.example.com/mcp --scopes mcp',
                'Accept tokens of that issuer',
              ),
          (a) =>
            configOAuth(
              {
                dir: stackDir(a, io),
                resource: a.resource,
                issuer: a.issuer,
                jwksUrl: a['jwks-url'],
                audience: a.audience,
                scopes: a.scopes,
                algorithms: a.algorithms,
                json: a.json,
              },
              io,
            ),
        )
        .demandCommand(1, 'Choose a config command: oauth'),
    )
  return commandsWithRuntime(parser, io)
    .demandCommand(1, 'Choose a command (see --help)')
    .strict()
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(CLI_VERSION)
    .wrap(Math.min(110, process.stdout.columns ?? 100))
    .exitProcess(false)
    .fail((message, error) => {
      throw error ?? new CliError('ERR_CLI_USAGE', `${message} (see --help)`)
    })
}

/**
 * Runs the CLI with `args` (without node and script) and returns the exit code. Errors become
 * one line on stderr; the exit code comes from `describeFailure`, the one mapping.
 */
export async function main(args: string[], io: Io): Promise<number> {
  try {
    await buildParser(args, io).parseAsync()
    return process.exitCode === undefined ? EXIT.ok : Number(process.exitCode)
  } catch (error) {
    const { exitCode, message } = describeFailure(error)
    io.err(`sallyport: ${message}\n`)
    if (io.env.SALLYPORT_DEBUG === '1' && error instanceof Error && error.stack) io.err(`${error.stack}\n`)
    return exitCode
  }
}
