import { fileURLToPath } from 'node:url'

/** File name of the wrapper in the managed directory's `plugins/` (the runtime loads `*.js` there). */
export const PLUGIN_WRAPPER_FILE = 'sallyport-runtime-guard.js'

/**
 * Absolute path of this package's bundled plugin module (`dist/plugin.js`): one file that needs
 * nothing else, which the wrapper imports. Resolved beside this module whether it runs from
 * `src/` (tests) or `dist/`.
 */
export function bundledPluginPath(): string {
  return fileURLToPath(new URL('../dist/plugin.js', import.meta.url))
}

/**
 * The text of the plugin wrapper: it re-exports the guard from `modulePath` (an absolute path:
 * the image bakes the module at a fixed path, a local stack points at the installed package).
 * @throws TypeError when `modulePath` is not absolute.
 */
export function pluginWrapperSource(modulePath: string): string {
  if (!modulePath.startsWith('/')) throw new TypeError('modulePath must be absolute')
  return `// Release-owned: holds the gateway's agents to the workspace guard (@agentgate/runtime-guard).
// Without this plugin a remote credential's agent could read through symlinks and secret files.
export { SallyportRuntimeGuard } from ${JSON.stringify(modulePath)}
`
}
