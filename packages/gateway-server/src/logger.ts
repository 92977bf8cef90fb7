import { type Logger, pino } from 'pino'

export type { Logger }

/** Bytes of log lines gathered before they are written to standard output together. */
export const LOG_BUFFER_BYTES = 4096
/** The longest a gathered log line waits before it is written. */
export const LOG_FLUSH_MS = 250

/**
 * Structured JSON logs. Only fixed field names are ever logged (username, tool, outcome, codes,
 * durations); message text, keys, tokens, handles and upstream ids never are. The redact list
 * is a second line of defence should a future call site pass a whole object by mistake.
 *
 * Without a `destination`, lines go to standard output asynchronously and gathered (up to
 * `LOG_BUFFER_BYTES`, for at most `LOG_FLUSH_MS`): an audit line per operation then costs no write
 * of its own. Nothing gathered is lost when the process exits, normally or on a crash (`exit`
 * writes what is left synchronously), and `Gateway.close()` flushes; a process killed by a signal
 * it does not handle loses at most the last `LOG_FLUSH_MS`.
 */
export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'sallyport-gateway' },
      redact: {
        paths: ['authorization', 'key', 'token', 'password', 'handle', '*.authorization', '*.key', '*.token'],
        censor: '[redacted]',
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    (options.destination as pino.DestinationStream | undefined) ?? bufferedDestination(1),
  )
}

/**
 * The gathering destination `createLogger` writes to by default (`dest`: a file descriptor or a
 * file path): written asynchronously, `LOG_BUFFER_BYTES` at a time or every `LOG_FLUSH_MS`, and
 * synchronously whatever is left when the process exits.
 */
export function bufferedDestination(dest: number | string): pino.DestinationStream {
  return pino.destination({ dest, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS })
}

/** The longest `flushLogger` waits for a destination that does not take lines (a stalled pipe). */
const FLUSH_WAIT_MS = 1000

/**
 * Writes out what `logger` has gathered; resolves when it has been handed to the destination (or
 * after a second, should the destination not drain: what is left is written at exit).
 */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, FLUSH_WAIT_MS)
    timer.unref()
    const done = (): void => {
      clearTimeout(timer)
      resolve()
    }
    try {
      logger.flush(done)
    } catch {
      done() // a destination that cannot flush (closed, say) has nothing gathered
    }
  })
}
