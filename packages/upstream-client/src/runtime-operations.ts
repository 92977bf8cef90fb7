import type { OpencodeClient, Config as SdkConfig } from '@opencode-ai/sdk/v2'
import { z } from 'zod'
import type { UpstreamClient } from './client-api.ts'
import type { Invoke } from './invoke.ts'
import {
  AgentSchema,
  BooleanResultSchema,
  ConfigSchema,
  ConfiguredProvidersSchema,
  HealthSchema,
  ProviderListSchema,
} from './schemas.ts'

type RuntimeOperations = Pick<
  UpstreamClient,
  | 'getGlobalConfig'
  | 'patchGlobalConfig'
  | 'getConfig'
  | 'setAuth'
  | 'removeAuth'
  | 'listProviders'
  | 'configuredProviders'
  | 'listAgents'
  | 'health'
>

/** Configuration, provider credentials, catalogs and health of the runtime. */
export function createRuntimeOperations(sdk: OpencodeClient, invoke: Invoke): RuntimeOperations {
  return {
    getGlobalConfig: (options) =>
      invoke('global.config.get', ConfigSchema, (call) => sdk.global.config.get(call), options),

    patchGlobalConfig: (patch, options) =>
      invoke(
        'global.config.update',
        ConfigSchema,
        // The runtime validates the document; this client keeps it opaque.
        (call) => sdk.global.config.update({ config: patch as SdkConfig }, call),
        options,
      ),

    getConfig: (options) =>
      invoke('config.get', ConfigSchema, (call) => sdk.config.get(undefined, call), options),

    setAuth: (providerId, auth, options) =>
      invoke(
        'auth.set',
        BooleanResultSchema,
        (call) => sdk.auth.set({ providerID: providerId, auth }, call),
        options,
      ),

    removeAuth: (providerId, options) =>
      invoke(
        'auth.remove',
        BooleanResultSchema,
        (call) => sdk.auth.remove({ providerID: providerId }, call),
        options,
      ),

    listProviders: (options) =>
      invoke('provider.list', ProviderListSchema, (call) => sdk.provider.list(undefined, call), options),

    configuredProviders: (options) =>
      invoke(
        'config.providers',
        ConfiguredProvidersSchema,
        (call) => sdk.config.providers(undefined, call),
        options,
      ),

    listAgents: (options) =>
      invoke('app.agents', z.array(AgentSchema), (call) => sdk.app.agents(undefined, call), options),

    health: (options) => invoke('global.health', HealthSchema, (call) => sdk.global.health(call), options),
  }
}
