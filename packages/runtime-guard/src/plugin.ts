/**
 * The module the runtime loads: the stack's plugin wrapper (`system/assistant/plugins/…`)
 * re-exports `SallyportRuntimeGuard` from this file, bundled with everything it needs, at a
 * fixed path. The runtime calls every exported function as a plugin, so this file exports
 * exactly one.
 */
import { createRuntimeGuard, type RuntimeGuardPlugin } from './create-runtime-guard.ts'

/** The runtime guard with its defaults (the gateway's agents, 10 MiB reads, password removed). */
export const SallyportRuntimeGuard: RuntimeGuardPlugin = createRuntimeGuard()
