/**
 * sallyport: the `sallyport` operator CLI. The binary is `sallyport`; these exports let other
 * tools run the same commands in-process.
 */
export { type ConfigOAuthOptions, configOAuth } from './commands/config-oauth.ts'
export {
  type CredentialCommandOptions,
  credentialAdd,
  credentialList,
  credentialMapOAuth,
  credentialRemove,
  credentialRotate,
  credentialSetPolicy,
} from './commands/credential.ts'
export {
  formatInitResult,
  type InitEntry,
  type InitOptions,
  type InitResult,
  initStack,
} from './commands/init.ts'
export { CliError, type CliErrorCode } from './errors.ts'
export { describeFailure, EXIT } from './exit-codes.ts'
export { type Io, processIo } from './io.ts'
export { CLI_VERSION, main } from './main.ts'
export { type LayoutOverrides, STACK_CONFIG_FILE, type StackLayout, stackLayout } from './stack/layout.ts'
export {
  defaultStackConfig,
  loadStackConfig,
  type OAuthConfig,
  type StackConfig,
  StackConfigSchema,
} from './stack/stack-config.ts'
