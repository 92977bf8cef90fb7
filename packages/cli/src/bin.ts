import { processIo } from './io.ts'
import { main } from './main.ts'

// The entry: run, then exit with the mapped code. `up` keeps running until its children stop.
main(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(
      `agentgate: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`,
    )
    process.exitCode = 1
  },
)
