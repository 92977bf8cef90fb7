import { type ModelServer, type ModelServerOptions, startModelServer } from './model-server.ts'
import { type RuntimeHandle, type RuntimeOptions, startRuntime } from './start-runtime.ts'

/** A scripted model server and a runtime wired to it. */
export interface Stack {
  model: ModelServer
  runtime: RuntimeHandle
  /** Stops the runtime, then the model server. */
  stop(): Promise<void>
}

/**
 * Starts a model server and a runtime that uses it. If the runtime fails to start the model
 * server is closed before the error is rethrown.
 *
 * @example
 * const { model, runtime, stop } = await startStack()
 */
export async function startStack(
  options: { model?: ModelServerOptions; runtime?: Omit<RuntimeOptions, 'modelURL'> } = {},
): Promise<Stack> {
  const model = await startModelServer(options.model)
  let runtime: RuntimeHandle
  try {
    runtime = await startRuntime({ ...options.runtime, modelURL: model.baseURL })
  } catch (error) {
    await model.close()
    throw error
  }
  return {
    model,
    runtime,
    async stop() {
      try {
        await runtime.stop()
      } finally {
        await model.close()
      }
    },
  }
}
