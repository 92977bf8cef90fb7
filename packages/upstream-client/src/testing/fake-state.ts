import type {
  Agent,
  Message,
  PermissionRequest,
  ProviderList,
  QuestionRequest,
  Session,
  SessionStatus,
  Todo,
} from '../schemas.ts'

/** The in-memory state of a fake runtime. Tests may read it; drive it through the helpers. */
export interface FakeState {
  /** Sessions by id, in creation order. */
  readonly sessions: Map<string, Session>
  /** Messages of each session, oldest first. */
  readonly messages: Map<string, Message[]>
  /** Busy and retrying sessions (idle ones are absent, as in `GET /session/status`). */
  readonly status: Map<string, SessionStatus>
  /** Per session: user message ids of turns, the running one first, queued ones after it. */
  readonly turns: Map<string, string[]>
  readonly permissions: Map<string, PermissionRequest>
  readonly questions: Map<string, QuestionRequest>
  readonly todos: Map<string, Todo[]>
  /** Stored provider credentials (`PUT /auth/{providerID}`). */
  readonly auth: Map<string, Record<string, unknown>>
  /** Patterns approved with `always` (the runtime keeps them project-wide, in memory). */
  readonly alwaysApproved: string[]
  /** How many forks each session has had (for the `(fork #N)` title). */
  readonly forkCounts: Map<string, number>
  globalConfig: Record<string, unknown>
  /** The project part of the merged config `GET /config` returns (merged over `globalConfig`). */
  projectConfig: Record<string, unknown>
  agents: Agent[]
  providers: ProviderList
}

/** The runtime version the fake claims (`/global/health`, `session.version`). */
export const FAKE_RUNTIME_VERSION = '1.18.33'

/** The agents a fresh fake lists: the runtime's natives plus the gateway profiles. */
export function defaultAgents(): Agent[] {
  const rule = (permission: string, action: string) => ({ permission, pattern: '*', action })
  return [
    { name: 'build', mode: 'primary', native: true, permission: [rule('*', 'allow')], options: {} },
    { name: 'plan', mode: 'primary', native: true, permission: [rule('edit', 'deny')], options: {} },
    { name: 'general', mode: 'subagent', native: true, permission: [rule('*', 'allow')], options: {} },
    {
      name: 'remote',
      mode: 'primary',
      native: false,
      permission: [rule('*', 'deny'), rule('question', 'allow')],
      options: {},
    },
    {
      name: 'remote-read',
      mode: 'primary',
      native: false,
      permission: [rule('*', 'deny'), rule('read', 'allow'), rule('question', 'allow')],
      options: {},
    },
    {
      name: 'remote-full',
      mode: 'primary',
      native: false,
      permission: [rule('bash', 'ask'), rule('edit', 'ask'), rule('question', 'allow')],
      options: {},
    },
  ]
}

/** The scripted provider `fake/fake-1`, like the testkit's runtime config. */
export function defaultProviders(): ProviderList {
  return {
    all: [
      {
        id: 'fake',
        name: 'Fake LLM',
        source: 'config',
        env: [],
        options: {},
        models: { 'fake-1': { id: 'fake-1', name: 'Fake One', providerID: 'fake' } },
      },
    ],
    default: { fake: 'fake-1' },
    connected: ['fake'],
  }
}

/** A fresh, empty state. */
export function createFakeState(): FakeState {
  return {
    sessions: new Map(),
    messages: new Map(),
    status: new Map(),
    turns: new Map(),
    permissions: new Map(),
    questions: new Map(),
    todos: new Map(),
    auth: new Map(),
    alwaysApproved: [],
    forkCounts: new Map(),
    globalConfig: {},
    projectConfig: { model: 'fake/fake-1', provider: { fake: { options: { apiKey: 'fake-key' } } } },
    agents: defaultAgents(),
    providers: defaultProviders(),
  }
}

/** Deep merge of plain JSON objects (arrays and scalars of `patch` replace), like a config PATCH. */
export function mergeJson(
  base: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(patch)) {
    const current = out[key]
    out[key] = isPlainObject(current) && isPlainObject(value) ? mergeJson(current, value) : value
  }
  return out
}

/** True for a non-null, non-array object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
