import type { Capability } from './capabilities.ts'
import { listsByPolicy } from './grant-lists.ts'
import { type Policy, parsePolicy } from './policy.ts'

/** The name of an MCP resource template of the gateway. */
export type ResourceTemplateName =
  | 'gateway.session.messages'
  | 'gateway.session.diff'
  | 'gateway.session.todos'
  | 'gateway.job'
  | 'gateway.workspace.file'

/** An MCP resource template of the gateway; variables are opaque gateway handles (or a path). */
export interface ResourceTemplate {
  readonly name: ResourceTemplateName
  readonly uriTemplate: string
  readonly requires: Capability | null
}

const template = (name: ResourceTemplateName, uriTemplate: string, requires: Capability): ResourceTemplate =>
  Object.freeze({ name, uriTemplate, requires })

// Keyed by every `ResourceTemplateName` (in catalog order): a template missing here, or a
// misspelt one, does not compile.
const TEMPLATES = {
  'gateway.session.messages': ['gateway://sessions/{session}/messages', 'session-resources'],
  'gateway.session.diff': ['gateway://sessions/{session}/diff', 'session-resources'],
  'gateway.session.todos': ['gateway://sessions/{session}/todos', 'session-resources'],
  // Job state is the resource form of `gateway.job.get`.
  'gateway.job': ['gateway://jobs/{job}', 'agent-run'],
  // `{+path}` (RFC 6570 reserved expansion) keeps the slashes of a relative workspace path.
  'gateway.workspace.file': ['gateway://workspace/{+path}', 'workspace-search-read'],
} as const satisfies Record<ResourceTemplateName, readonly [string, Capability]>

/** Every resource template, in catalog order. */
export const RESOURCE_TEMPLATES: readonly ResourceTemplate[] = Object.freeze(
  (Object.keys(TEMPLATES) as ResourceTemplateName[]).map((name) => {
    const [uriTemplate, requires] = TEMPLATES[name]
    return template(name, uriTemplate, requires)
  }),
)

const BY_POLICY = listsByPolicy(RESOURCE_TEMPLATES)

/**
 * The resource templates `policy` may list and read: the session views and job state for every
 * policy, workspace files for `read` and `full`.
 * @throws TypeError for an unknown policy.
 */
export function resourceTemplatesFor(policy: Policy): readonly ResourceTemplate[] {
  return BY_POLICY[parsePolicy(policy)]
}
