import { constants } from 'node:fs'
import { access, chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { bundledPluginPath, PLUGIN_WRAPPER_FILE, pluginWrapperSource } from '@sallyport/runtime-guard'
import {
  bundledTasksPluginPath,
  TASKS_PLUGIN_WRAPPER_FILE,
  tasksPluginWrapperSource,
} from '@sallyport/scheduler/stack'
import { CliError } from '../errors.ts'
import { relativeToStack, type StackLayout } from './layout.ts'

/** Where the managed directory keeps the runtime guard's wrapper. */
export function runtimeGuardWrapperPath(layout: StackLayout): string {
  return join(layout.managedDir, 'plugins', PLUGIN_WRAPPER_FILE)
}

/** What {@link inspectRuntimeGuard} found. */
export type RuntimeGuardState =
  | { readonly ok: true; readonly module: string }
  | { readonly ok: false; readonly problem: 'module' | 'wrapper'; readonly detail: string }

/**
 * Whether the assistant runtime will load the runtime guard: the bundled module of this CLI is
 * readable, and the managed directory holds the release's wrapper, unchanged.
 */
export async function inspectRuntimeGuard(layout: StackLayout): Promise<RuntimeGuardState> {
  const module = bundledPluginPath()
  try {
    await access(module, constants.R_OK)
  } catch {
    return { ok: false, problem: 'module', detail: 'the bundled runtime guard module is missing' }
  }
  const path = runtimeGuardWrapperPath(layout)
  let text: string | undefined
  try {
    text = await readFile(path, 'utf8')
  } catch {
    text = undefined
  }
  if (text !== pluginWrapperSource())
    return {
      ok: false,
      problem: 'wrapper',
      detail: `${relativeToStack(layout, path)} is ${text === undefined ? 'missing' : 'not the release version'}`,
    }
  return { ok: true, module }
}

/**
 * Makes sure the runtime guard will load, before the assistant runtime starts: restores the
 * wrapper when it is missing or changed (it is release-owned; the directory's read-only mode is
 * lifted for the write and put back), and returns the module path the runtime must be given.
 * Fails closed: throws `ERR_CLI_START_FAILED` when either cannot be had, so a stack never serves
 * remote credentials without the guard.
 */
export async function ensureRuntimeGuard(layout: StackLayout): Promise<string> {
  const state = await inspectRuntimeGuard(layout)
  if (state.ok) return state.module
  if (state.problem === 'module')
    throw new CliError('ERR_CLI_START_FAILED', `${state.detail}: reinstall sallyport`)
  try {
    await restoreWrapper(layout, PLUGIN_WRAPPER_FILE, pluginWrapperSource())
  } catch (error) {
    throw new CliError(
      'ERR_CLI_START_FAILED',
      `${state.detail} and could not be restored (${(error as NodeJS.ErrnoException).code ?? 'error'}): run \`sallyport init\` where system/ is writable`,
      { cause: error },
    )
  }
  const again = await inspectRuntimeGuard(layout)
  if (!again.ok) throw new CliError('ERR_CLI_START_FAILED', again.detail)
  return again.module
}

/** Where the managed directory keeps the task tools' wrapper. */
export function tasksWrapperPath(layout: StackLayout): string {
  return join(layout.managedDir, 'plugins', TASKS_PLUGIN_WRAPPER_FILE)
}

/**
 * Makes sure the assistant will load the task tools: restores their wrapper when it is missing or
 * changed, and returns the bundled module's path. Not fail-closed like the guard (without the
 * module the assistant only lacks the task tools): returns undefined, with the reason, instead.
 */
export async function ensureTasksPlugin(layout: StackLayout): Promise<{ module?: string; problem?: string }> {
  const module = bundledTasksPluginPath()
  try {
    await access(module, constants.R_OK)
  } catch {
    return { problem: 'the bundled task tools module is missing: reinstall sallyport' }
  }
  const text = await readFile(tasksWrapperPath(layout), 'utf8').catch(() => undefined)
  if (text !== tasksPluginWrapperSource()) {
    try {
      await restoreWrapper(layout, TASKS_PLUGIN_WRAPPER_FILE, tasksPluginWrapperSource())
    } catch (error) {
      return {
        problem: `${relativeToStack(layout, tasksWrapperPath(layout))} could not be restored (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      }
    }
  }
  return { module }
}

/**
 * Writes a release-owned wrapper into the managed directory's `plugins/`: the directories'
 * read-only modes are lifted for the write and put back; the file is left read-only.
 */
async function restoreWrapper(layout: StackLayout, fileName: string, source: string): Promise<void> {
  const dir = join(layout.managedDir, 'plugins')
  const managedMode = (await stat(layout.managedDir)).mode & 0o7777
  await chmod(layout.managedDir, managedMode | 0o200)
  try {
    await mkdir(dir, { mode: 0o555 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error
    })
    const dirMode = (await stat(dir)).mode & 0o7777
    await chmod(dir, dirMode | 0o200)
    try {
      const path = join(dir, fileName)
      await chmod(path, 0o644).catch(() => undefined)
      await writeFile(path, source, { mode: 0o444 })
      await chmod(path, 0o444)
    } finally {
      await chmod(dir, dirMode)
    }
  } finally {
    await chmod(layout.managedDir, managedMode)
  }
}
