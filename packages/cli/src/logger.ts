import { type Logger, pino } from 'pino'

export type { Logger }

/**
 * Structured JSON lines for long-running commands (`up`, `serve`). Keys, passwords, tokens and
 * authorization headers are redacted should a call site ever pass one by mistake.
 */
export function createCliLogger(destination?: NodeJS.WritableStream, level = 'info'): Logger {
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
    (destination ?? pino.destination({ fd: 1, sync: true })) as pino.DestinationStream,
  )
}
