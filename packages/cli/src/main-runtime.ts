import type { Argv } from 'yargs'
import { attach } from './commands/attach.ts'
import { doctor } from './commands/doctor/doctor.ts'
import { health } from './commands/health.ts'
import { serve } from './commands/serve.ts'
import { up } from './commands/up.ts'
import { LOG_FORMATS, type LogFormat } from './console-format.ts'
import { CliError } from './errors.ts'
import type { Io } from './io.ts'
import { stackDir } from './stack-dir.ts'

/** `up --help`: what its exit codes say (the table of `exit-codes.ts`, the part `up` can end with). */
export const UP_EXIT_CODES = [
  'Exit codes:',
  '  0   stopped by SIGINT/SIGTERM (everything stopped)',
  '  3   the stack is missing or its configuration is invalid',
  '  6   I/O: unreadable or insecure files',
  '  7   a port is in use',
  '  8   a process failed to start (or exited while starting)',
  '  10  the assistant runtime exited while running: the rest was stopped',
  '  11  the moderator runtime exited while running: the rest was stopped',
  '  12  the scheduler exited while running: the rest was stopped',
  'On 10-12 stderr names the process and its own exit code or signal; restart the whole stack.',
].join('\n')

/** `--log-format` of `up` and `serve` (default `SALLYPORT_LOG_FORMAT`, else `auto`). */
function logFormatOption(io: Io) {
  const fromEnv = io.env.SALLYPORT_LOG_FORMAT
  return {
    type: 'string',
    choices: LOG_FORMATS,
    default: (LOG_FORMATS as readonly string[]).includes(fromEnv ?? '') ? (fromEnv as LogFormat) : 'auto',
    describe:
      'Console output: short human lines (pretty), JSON lines (json), or pretty on a terminal and JSON otherwise (auto; default $SALLYPORT_LOG_FORMAT, else auto; the image sets json)',
  } as const
}

/**
 * Commands that start or reach the stack's processes: up, serve, health, attach and doctor (init,
 * credential and config are wired in main.ts).
 */
export function commandsWithRuntime(parser: Argv, io: Io): Argv {
  return parser
    .command(
      'up',
      'Run the stack here: assistant runtime, moderator runtime, scheduler and gateway; stops all when one exits (exit 10-12 names it)',
      (c) =>
        c
          .option('host', {
            type: 'string',
            describe: 'Gateway bind address (overrides gateway.host; the image uses 0.0.0.0)',
          })
          .option('stop-grace-ms', {
            type: 'number',
            default: 5000,
            describe: 'SIGTERM → SIGKILL grace period',
          })
          .option('start-timeout-ms', {
            type: 'number',
            default: 60_000,
            describe: 'Deadline for all processes to be healthy',
          })
          .option('log-format', logFormatOption(io))
          .example('$0 up --dir ~/sallyport', 'Start the stack; Ctrl-C stops it')
          .example('$0 up --log-format json | tee up.log', 'JSON lines, whatever the terminal')
          .example('SALLYPORT_DIR=~/sallyport $0 up', 'The same, with the directory from the environment')
          .epilog(UP_EXIT_CODES),
      async (a) => {
        await up(
          {
            dir: stackDir(a, io),
            host: a.host,
            stopGraceMs: a['stop-grace-ms'],
            startTimeoutMs: a['start-timeout-ms'],
            logFormat: a['log-format'] as LogFormat,
          },
          io,
        )
      },
    )
    .command(
      'health',
      "Exit 0 when this stack's gateway answers /health (for container health checks)",
      (c) =>
        c
          .option('timeout-ms', { type: 'number', default: 3000, describe: 'Give up after this long' })
          .example('$0 health --dir ~/sallyport', 'Exit 0 when the gateway is up, 9 when not'),
      async (a) => {
        await health({ dir: stackDir(a, io), timeoutMs: a['timeout-ms'] }, io)
      },
    )
    .command(
      'serve',
      'Run the gateway alone, in front of a running native server',
      (c) =>
        c
          .option('host', { type: 'string', describe: 'Bind address (default gateway.host)' })
          .option('port', { type: 'number', describe: 'Port (default gateway.port)' })
          .option('native-url', {
            type: 'string',
            describe: 'Native server URL (default: recorded in state/stack.env)',
          })
          .option('native-username', { type: 'string', describe: 'Basic auth user of the native server' })
          .option('native-password-file', {
            type: 'string',
            describe: 'File holding the native password (default state/native-password)',
          })
          .option('workspace', {
            type: 'string',
            describe: 'Workspace root (default <stack>/workspace; /work in the image)',
          })
          .option('log-format', logFormatOption(io))
          .example('$0 serve --dir ~/sallyport --port 9000', 'Gateway on 127.0.0.1:9000')
          .example(
            'GATEWAY_ALLOWED_ORIGINS=https://app.example.com $0 serve',
            'Allow one browser origin on /mcp',
          ),
      async (a) => {
        await serve(
          {
            dir: stackDir(a, io),
            host: a.host,
            port: a.port,
            nativeUrl: a['native-url'],
            nativeUsername: a['native-username'],
            nativePasswordFile: a['native-password-file'],
            workspace: a.workspace,
            logFormat: a['log-format'] as LogFormat,
          },
          io,
        )
      },
    )
    .command(
      'attach',
      "Open the runtime's terminal client on the native server (trusted: bypasses the gateway)",
      (c) =>
        c
          .option('url', {
            type: 'string',
            describe: 'Native server URL (default: recorded in state/stack.env)',
          })
          .option('session', { alias: 's', type: 'string', describe: 'Session id to open' })
          .option('continue', { alias: 'c', type: 'boolean', describe: 'Continue the last session' })
          .example(
            '$0 attach --dir ~/sallyport',
            'Username and password go through the environment, never argv',
          ),
      async (a) => {
        process.exitCode = await attach(
          { dir: stackDir(a, io), url: a.url, session: a.session, continue: a.continue },
          io,
        )
      },
    )
    .command(
      'doctor',
      'Check layout, permissions, ports, runtime version and health; says what to fix',
      (c) =>
        c
          .option('json', { type: 'boolean', default: false, describe: 'Print machine-readable JSON' })
          .option('model-timeout-ms', {
            type: 'number',
            default: 30_000,
            describe:
              'Deadline of the model readiness check (one request through the running runtime with its default model); 0 skips it',
          })
          .example('$0 doctor --dir ~/sallyport', 'Exit 0 when nothing fails; 9 otherwise')
          .example('$0 doctor --model-timeout-ms 0', 'Everything but the model readiness check'),
      async (a) => {
        const modelTimeoutMs = a['model-timeout-ms']
        if (!Number.isInteger(modelTimeoutMs) || modelTimeoutMs < 0)
          throw new CliError('ERR_CLI_USAGE', '--model-timeout-ms: a whole number of milliseconds, 0 or more')
        await doctor({ dir: stackDir(a, io), json: a.json, modelTimeoutMs }, io)
      },
    )
}
