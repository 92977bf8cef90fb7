import { type Logger, pino } from 'pino'

export type { Logger }

/**
 * Structured JSON logs. Only fixed field names are ever logged (username, tool, outcome, codes,
 * durations); message text, keys, tokens, handles and upstream ids never are. The redact list
 * is a second line of defence should a future call site pass a whole object by mistake.
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
    options.destination as pino.DestinationStream | undefined,
  )
}
