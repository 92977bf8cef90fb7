// Test support (not exported): a JobContext over a runtime port, with handles sealed to fixed
// strings and a given clock, for the job-state unit and property tests.
import { createRedactor } from '../redact.js'
import type { RuntimePort } from '../runtime/port.js'
import type { OwnedSessions } from '../sessions/owned.js'
import type { JobContext } from './job-status.js'

export function jobContext(port: RuntimePort, now: () => number): JobContext {
  const owned = {
    sealSession: async () => 'v1.session',
    sealJob: async () => 'v1.job',
    sealInteraction: async () => 'v1.interaction',
  } as unknown as OwnedSessions
  return {
    principal: { policy: 'full' } as JobContext['principal'],
    runtime: port,
    owned,
    redactor: createRedactor(),
    now,
  }
}
