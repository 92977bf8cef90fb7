import { fileURLToPath } from 'node:url'

/** File name of the wrapper in the managed directory's `plugins/`. */
export const TASKS_PLUGIN_WRAPPER_FILE = 'sallyport-tasks.js'
/** Names the bundled task-tools module (set by the supervisor). */
export const TASKS_MODULE_ENV = 'SALLYPORT_TASKS_MODULE'
/** The stack directory (set by the supervisor; not a secret). */
export const STACK_DIR_ENV = 'SALLYPORT_STACK_DIR'

/** Absolute path of the bundled plugin module (`dist/plugin.js`), from `src/` or `dist/`. */
export function bundledTasksPluginPath(): string {
  return fileURLToPath(new URL('../dist/plugin.js', import.meta.url))
}

/** Absolute path of the scheduler process's entry (`dist/daemon-main.js`), from `src/` or `dist/`. */
export function daemonEntryPath(): string {
  return fileURLToPath(new URL('../dist/daemon-main.js', import.meta.url))
}

/**
 * The wrapper the managed directory holds: the same text in every installation (the supervisor
 * names the module). Unlike the runtime guard it does not stop the runtime when the module is
 * missing: without it the assistant only lacks the task tools, and says so in the log.
 */
export function tasksPluginWrapperSource(): string {
  return `// Release-owned (sallyport): the assistant's scheduled-task tools.
// The module is @sallyport/scheduler's dist/plugin.js, named by the supervisor.
let tasks = async () => ({})
try {
  const path = process.env.${TASKS_MODULE_ENV}
  if (path && path.startsWith('/')) {
    const loaded = (await import(path)).SallyportTasks
    if (typeof loaded !== 'function') throw new Error('the module exports no SallyportTasks')
    tasks = loaded
  }
} catch (error) {
  console.error(JSON.stringify({ level: 'error', msg: 'task tools not loaded', error: String(error?.message ?? error) }))
}
export const SallyportTasks = tasks
`
}
