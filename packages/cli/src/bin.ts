import { processIo } from './io.ts'
import { main } from './main.ts'

// The entry: run, then exit with the mapped code. Exiting explicitly ends any connection a
// library kept open after `up`/`serve` stopped (stdout to a pipe or file is written synchronously).
main(process.argv.slice(2), processIo()).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `sallyport: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`,
    )
    process.exit(1)
  },
)
