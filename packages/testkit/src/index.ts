export { findScriptId, SCRIPT_MARKER_PATTERN, scriptMarker } from './chat-request.ts'
export type { TestkitErrorCode } from './errors.ts'
export { TestkitError } from './errors.ts'
export { freePort } from './free-port.ts'
export type {
  ModelServer,
  ModelServerOptions,
  ModerationRequestView,
  RecordedRequest,
} from './model-server.ts'
export { startModelServer } from './model-server.ts'
export type { AgentProfileName, JsonObject } from './runtime-config.ts'
export {
  AGENT_PROFILES,
  buildRuntimeConfig,
  FAKE_MODEL_ID,
  FAKE_MODERATION_MODEL_ID,
  FAKE_PROVIDER_ID,
  scriptedModelPreferences,
} from './runtime-config.ts'
export type { ProcessUser, Sandbox } from './sandbox.ts'
export type {
  ChatCompletionBody,
  ChatMessage,
  ChatRequestView,
  ErrorStep,
  ScriptEntry,
  ScriptStep,
  ScriptToolCall,
  TextStep,
  ToolCallStep,
} from './script-steps.ts'
export type { RuntimeHandle, RuntimeOptions } from './start-runtime.ts'
export { startRuntime } from './start-runtime.ts'
export type { Stack } from './start-stack.ts'
export { startStack } from './start-stack.ts'
export type { QuestionInput, TodoInput } from './step-builders.ts'
export { step } from './step-builders.ts'
export type { WaitForOptions } from './wait-for.ts'
export { waitFor } from './wait-for.ts'
