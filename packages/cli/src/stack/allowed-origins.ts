/**
 * The browser origins allowed on `/mcp`: `GATEWAY_ALLOWED_ORIGINS` (comma-separated) when it holds
 * at least one origin, else `gateway.allowedOrigins` of agentgate.json. An unset, empty or blank
 * variable means "not set": compose.yaml always defines it (`${GATEWAY_ALLOWED_ORIGINS:-}`), so an
 * empty value must not silently replace the configured list with an empty one.
 */
export function allowedOrigins(envValue: string | undefined, configured: readonly string[]): string[] {
  const fromEnv = (envValue ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean)
  return fromEnv.length > 0 ? fromEnv : [...configured]
}
