/**
 * The scheduler process: `node daemon-main.js --dir <stack>`. `sallyport up` starts it with an
 * environment that holds no secret and stops the stack when it exits.
 */
import { jsonLog, runSchedulerDaemon } from './daemon.ts'

const at = process.argv.indexOf('--dir')
const root = at >= 0 ? process.argv[at + 1] : undefined
if (!root) {
  process.stderr.write('usage: daemon-main.js --dir <stack directory>\n')
  process.exit(2)
}
const controller = new AbortController()
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => controller.abort())
runSchedulerDaemon({ root, signal: controller.signal }).then(
  () => process.exit(0),
  (error: unknown) => {
    jsonLog(
      'error',
      { event: 'scheduler_failed', error: error instanceof Error ? error.message : String(error) },
      'scheduler failed',
    )
    process.exit(1)
  },
)
