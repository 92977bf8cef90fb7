import { createRequire } from 'node:module'
import { type Logger, pino } from 'pino'
import { prettyOptions } from './console-format.ts'

export type { Logger }

/**
 * Structured JSON lines for long-running commands (`up`, `serve`). Keys, passwords, tokens and
 * authorization headers are redacted should a call site ever pass one by mistake.
 *
 * Without a `destination`, lines go to standard output gathered and asynchronously (4 KiB at a
 * time or every 250 ms, as the gateway's own default logger does): the gateway's audit line per
 * operation then costs no write of its own. What is gathered is written synchronously when the
 * process exits (a crash included); a process killed by a signal it does not handle loses at
 * most the last 250 ms.
 *
 * `format: 'pretty'` renders the same records as short human lines (console-format.ts), written
 * synchronously to standard output; for a terminal, which `up` and `serve` choose by default.
 */
export function createCliLogger(
  destination?: NodeJS.WritableStream,
  level = 'info',
  format: 'json' | 'pretty' = 'json',
): Logger {
  const target =
    format === 'pretty'
      ? loadPretty()({ ...prettyOptions(colorsWanted()), destination: destination ?? 1 })
      : destination
  return pino(
    {
      level,
      base: { service: 'sallyport' },
      redact: {
        paths: [
          'password',
          'key',
          'token',
          'authorization',
          '*.password',
          '*.key',
          '*.token',
          '*.authorization',
        ],
        censor: '[redacted]',
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    (target ??
      pino.destination({
        dest: 1,
        sync: false,
        minLength: 4096,
        periodicFlush: 250,
      })) as pino.DestinationStream,
  )
}

/** Colours on a terminal, unless `NO_COLOR` (https://no-color.org) or `TERM=dumb` says otherwise. */
function colorsWanted(): boolean {
  const noColor = process.env.NO_COLOR
  return (
    process.stdout.isTTY === true && (noColor === undefined || noColor === '') && process.env.TERM !== 'dumb'
  )
}

/**
 * pino-pretty, loaded only for the pretty format (about 2 MiB of a long-running process that
 * writes JSON lines would otherwise go to a formatter it never uses). It is CommonJS: required.
 */
function loadPretty(): PrettyFactory {
  const loaded = createRequire(import.meta.url)('pino-pretty') as PrettyFactory | { default: PrettyFactory }
  return typeof loaded === 'function' ? loaded : loaded.default
}

/** pino-pretty's factory: options in, a destination stream for pino out. */
type PrettyFactory = (options: Record<string, unknown>) => pino.DestinationStream
