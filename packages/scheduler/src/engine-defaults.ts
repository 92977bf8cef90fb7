import type { EngineConfig } from './engine-config.ts'

/** The engine configuration `init` writes. */
export function defaultEngineConfig(): EngineConfig {
  return {
    version: 1,
    engine: {
      kind: 'opencode-attach',
      server: 'native',
      agent: 'scheduled',
      passwordFile: '../../state/native-password',
    },
    tasks: { source: '../../knowledge/tasks', disabled: '../../knowledge/disabled-tasks' },
    scheduler: { enabled: [] },
  }
}
