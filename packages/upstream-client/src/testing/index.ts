/**
 * `@sallyport/upstream-client/testing`: an in-memory fake of the OpenCode runtime behind msw
 * handlers, for integration tests that must run without the real binary. Needs `msw` (an
 * optional peer dependency of this package).
 */

/** Defaults and input of `askPermission`/`askQuestion`. */
export { DEFAULT_FAKE_QUESTION, type FakePermissionInput } from './fake-asks.ts'
/** A request as the fake recorded it. */
export type { FakeRequestRecord } from './fake-handlers.ts'
/** Ids in the runtime's native shape (`ses_…`, `per_…`, …). */
export { fakeId } from './fake-ids.ts'
/** The fake runtime: `createFakeRuntime({ onTurn })` → `{ handlers, clientOptions, completeTurn, … }`. */
export {
  type CompleteTurnOptions,
  createFakeRuntime,
  type FakeRuntime,
  type FakeRuntimeOptions,
} from './fake-runtime.ts'
/** Input of `addSession`. */
export type { NewSessionInput } from './fake-sessions.ts'
/** The fake's state and its version string. */
export { FAKE_RUNTIME_VERSION, type FakeState } from './fake-state.ts'
/** A started turn, as `onTurn` receives it. */
export type { FakeTurn } from './fake-turns.ts'
