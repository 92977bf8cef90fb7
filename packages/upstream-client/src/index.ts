/**
 * `@sallyport/upstream-client`: the typed client of the OpenCode agent runtime (1.18.33) that the
 * gateway uses. Every request is pinned to one workspace directory, authenticated with HTTP
 * Basic, bounded by a timeout and validated with zod; failures are one `UpstreamError`.
 * Test doubles live in `@sallyport/upstream-client/testing`.
 */

/** Creates the client: `createUpstreamClient({ baseUrl, password, directory })`. */
export { createUpstreamClient } from './client.ts'
/** The client's methods and their inputs and outputs. */
export type {
  CreateSessionInput,
  ListMessagesInput,
  ListSessionPageInput,
  ListSessionsInput,
  MessagePage,
  PermissionReply,
  PromptAsyncInput,
  PromptPartInput,
  ProviderAuth,
  SettleResult,
  UpstreamClient,
} from './client-api.ts'
/** The one error of this package, its codes and the retry rule. */
export {
  isRetryableStatus,
  MAX_ERROR_BODY_LENGTH,
  UpstreamError,
  type UpstreamErrorCode,
  type UpstreamErrorInit,
} from './errors.ts'
/** Per-call options (`signal`, `timeoutMs`) every method accepts last. */
export type { CallOptions } from './invoke.ts'
/** Fresh native-format message ids (`msg_…`, time-ordered), and their shape check. */
export { isNativeMessageId, newMessageId, type RandomBytes } from './message-id.ts'
/** The default fetch: `node:http` with a keep-alive pool, without loading Node's global fetch. */
export {
  type BufferedAnswer,
  type BufferedGet,
  type BufferingFetch,
  createNodeFetch,
  type NodeFetch,
  type NodeFetchOptions,
} from './node-fetch.ts'
/** Options of `createUpstreamClient`. */
export type { EventStreamOptions, UpstreamClientOptions } from './options.ts'
/** A provider's error message without keys, credentials or host paths, for clients and operators. */
export { PROVIDER_MESSAGE_MAX, redactSecrets, sanitizeProviderMessage } from './provider-message.ts'
/** The validated response shapes (zod schemas and inferred types). */
export {
  type Agent,
  AgentSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  type Config,
  ConfigSchema,
  type ConfiguredProviders,
  ConfiguredProvidersSchema,
  type FileDiff,
  FileDiffSchema,
  type Health,
  HealthSchema,
  type Message,
  type MessageError,
  MessageErrorSchema,
  type MessageInfo,
  MessageInfoSchema,
  MessageSchema,
  type OtherPart,
  OtherPartSchema,
  type OtherPartType,
  type Part,
  PartSchema,
  type PatchPart,
  PatchPartSchema,
  type PermissionRequest,
  PermissionRequestSchema,
  type ProviderList,
  ProviderListSchema,
  type QuestionInfo,
  QuestionInfoSchema,
  type QuestionRequest,
  QuestionRequestSchema,
  type RawEvent,
  RawEventSchema,
  type ReasoningPart,
  ReasoningPartSchema,
  type Session,
  type SessionEvent,
  SessionEventSchema,
  type SessionEventType,
  type SessionListItem,
  SessionListItemSchema,
  SessionSchema,
  type SessionStatus,
  type SessionStatusMap,
  SessionStatusMapSchema,
  SessionStatusSchema,
  type StepFinishPart,
  StepFinishPartSchema,
  type StepStartPart,
  StepStartPartSchema,
  type TextPart,
  TextPartSchema,
  type Todo,
  TodoSchema,
  type ToolPart,
  ToolPartSchema,
  type ToolState,
  ToolStateSchema,
  type UserMessage,
  UserMessageSchema,
} from './schemas.ts'
/** The typed per-session event API (`client.events`) and its wait options. */
export type { UpstreamEvents, WaitForOptions, WaitUntilOptions } from './session-events.ts'
export { turnDiffOf, unquoteGitPath } from './turn-diff.ts'
