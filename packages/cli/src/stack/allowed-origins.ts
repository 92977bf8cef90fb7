/**
 * The browser origins allowed on `/mcp`: `GATEWAY_ALLOWED_ORIGINS` (comma-separated) when it holds
 * at least one origin, else `gateway.allowedOrigins` of sallyport.json (an unset, empty or blank
 * variable means "not set": compose.yaml always defines it). The gateway's own rule.
 */
export { selectAllowedOrigins as allowedOrigins } from '@sallyport/gateway-server/config'
