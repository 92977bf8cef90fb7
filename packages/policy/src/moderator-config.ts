/** The agent the gateway's moderator runs as (every tool denied). */
export const MODERATOR_AGENT = 'moderator'

/**
 * The moderator runtime's own configuration (its managed layer too, so nothing can loosen it):
 * every tool denied, for the default agent and the moderator agent. It classifies text and does
 * nothing else. The stack installs it as `system/moderator/opencode.json`; tests start their
 * moderator runtime with the same object.
 */
export function moderatorRuntimeConfig(): Record<string, unknown> {
  return {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    permission: { '*': 'deny' },
    agent: {
      [MODERATOR_AGENT]: {
        mode: 'primary',
        description: 'Classifies one input; has no tools',
        permission: { '*': 'deny' },
      },
    },
  }
}
