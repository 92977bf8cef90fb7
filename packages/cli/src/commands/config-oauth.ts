import { randomBytes } from 'node:crypto'
import { readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'
import { OAuthOptionsSchema } from '@sallyport/gateway-server/config'
import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { jsonText } from '../stack/managed-files.ts'
import { requireStack } from '../stack/require-stack.ts'
import { type OAuthConfig, validateStackConfig } from '../stack/stack-config.ts'

export interface ConfigOAuthOptions {
  readonly dir: string
  readonly resource: string
  readonly issuer: string
  readonly jwksUrl: string
  readonly audience: string
  /** Space- or comma-separated, or repeated. */
  readonly scopes: string | readonly string[]
  readonly algorithms?: string | readonly string[] | undefined
  readonly json?: boolean
}

/** Splits repeated and comma/space-separated list flags into one list without empties. */
export function splitList(value: string | readonly string[] | undefined): string[] {
  const items = typeof value === 'string' ? [value] : [...(value ?? [])]
  return items.flatMap((item) => item.split(/[\s,]+/)).filter((item) => item.length > 0)
}

/**
 * `sallyport config oauth`: enables OAuth bearer tokens by writing the `oauth` section of
 * `sallyport.json` (HTTPS URLs only; algorithms default to RS256). Other settings are kept. The
 * gateway reads it at start: restart `up`/`serve` to apply.
 */
export async function configOAuth(options: ConfigOAuthOptions, io: Io): Promise<void> {
  const layout = await requireStack(options.dir)
  const algorithms = splitList(options.algorithms)
  const candidate = {
    resource: options.resource,
    issuer: options.issuer,
    jwksUrl: options.jwksUrl,
    audience: options.audience,
    scopes: splitList(options.scopes),
    // None given: the schema's default.
    ...(algorithms.length > 0 && { algorithms }),
  }
  const parsed = OAuthOptionsSchema.safeParse(candidate)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const flag = flagName(String(issue?.path[0] ?? ''))
    throw new CliError('ERR_CLI_USAGE', `${flag}: ${issue?.message ?? 'invalid value'}`)
  }
  const oauth: OAuthConfig = parsed.data
  let raw: Record<string, unknown>
  try {
    raw = JSON.parse(await readFile(layout.configFile, 'utf8')) as Record<string, unknown>
  } catch {
    throw new CliError('ERR_CLI_CONFIG_INVALID', 'sallyport.json is missing or not valid JSON')
  }
  const next = { ...raw, oauth }
  const result = validateStackConfig(next)
  if ('errors' in result) throw new CliError('ERR_CLI_CONFIG_INVALID', `sallyport.json: ${result.errors[0]}`)
  await replaceFile(layout.configFile, jsonText(next))
  if (options.json) io.out(`${JSON.stringify({ oauth })}\n`)
  else {
    io.out(
      `OAuth enabled for ${oauth.resource} (issuer ${oauth.issuer}, algorithms ${oauth.algorithms.join(', ')}).\n`,
    )
    io.err(
      'Map subjects with `sallyport credential map oauth <issuer> <subject> <username>`; restart the gateway to apply.\n',
    )
  }
}

function flagName(field: string): string {
  const flags: Record<string, string> = {
    jwksUrl: '--jwks-url',
    algorithms: '--algorithms',
    scopes: '--scopes',
  }
  return flags[field] ?? `--${field}`
}

/** Atomically replaces a file, keeping its mode. */
async function replaceFile(path: string, text: string): Promise<void> {
  const mode = (await stat(path)).mode & 0o777
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`
  try {
    await writeFile(temp, text, { mode, flag: 'wx' })
    await rename(temp, path)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw new CliError('ERR_CLI_IO', `cannot write sallyport.json (${(error as NodeJS.ErrnoException).code})`)
  }
}
