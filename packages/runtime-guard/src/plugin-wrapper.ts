import { fileURLToPath } from 'node:url'

/** File name of the wrapper in the managed directory's `plugins/` (the runtime loads `*.js` there). */
export const PLUGIN_WRAPPER_FILE = 'sallyport-runtime-guard.js'

/** The environment variable that tells the wrapper where the bundled guard module is. */
export const RUNTIME_GUARD_MODULE_ENV = 'SALLYPORT_RUNTIME_GUARD_MODULE'

/** Exit code of a runtime whose guard could not be loaded (EX_CONFIG). */
export const RUNTIME_GUARD_EXIT_CODE = 78

/**
 * Absolute path of this package's bundled plugin module (`dist/plugin.js`): one file that needs
 * nothing else, which the wrapper imports. Resolved beside this module whether it runs from
 * `src/` (tests) or `dist/`.
 */
export function bundledPluginPath(): string {
  return fileURLToPath(new URL('../dist/plugin.js', import.meta.url))
}

/**
 * The text of the plugin wrapper the managed directory holds. It is the same for every
 * installation: the supervisor that starts the runtime names the bundled module in
 * `SALLYPORT_RUNTIME_GUARD_MODULE` (the image's fixed path, or the installed package's), so a
 * stack directory moved between the host and the image never points at a stale path.
 *
 * Fail closed: a runtime that loads plugins but cannot load the guard exits at once (code 78),
 * so the supervisor stops the stack, instead of serving remote credentials unguarded (the runtime
 * itself only logs a plugin that fails to load, and goes on).
 */
export function pluginWrapperSource(): string {
  return `// Release-owned (sallyport): holds the gateway's agents to the workspace guard.
// The module is @sallyport/runtime-guard's dist/plugin.js, named by the supervisor.
let guard
try {
  const path = process.env.${RUNTIME_GUARD_MODULE_ENV}
  if (!path || !path.startsWith('/')) throw new Error('${RUNTIME_GUARD_MODULE_ENV} is not set')
  guard = (await import(path)).SallyportRuntimeGuard
  if (typeof guard !== 'function') throw new Error('the module exports no SallyportRuntimeGuard')
} catch (error) {
  console.error(JSON.stringify({ level: 'fatal', msg: 'runtime guard not loaded: stopping', error: String(error?.message ?? error) }))
  process.exit(${RUNTIME_GUARD_EXIT_CODE})
}
export const SallyportRuntimeGuard = guard
`
}
