import { z } from 'zod'

/** The three policies of the gateway, least privileged first. */
export const POLICIES = ['chat', 'read', 'full'] as const

/** `chat`, `read` or `full`: selects the MCP catalog and the agent profile of a credential. */
export const PolicySchema = z.enum(POLICIES)
export type Policy = z.infer<typeof PolicySchema>

/**
 * Usernames: a lowercase ASCII letter, then up to 31 lowercase letters, digits, `_` or `-`.
 * No dots and no slashes, so a username is always one safe path segment and never collides
 * with the store's own files (`oauth-map.json`, `.lock`, `.generation`, `.tmp-*`).
 */
export const USERNAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/
export const UsernameSchema = z.string().regex(USERNAME_PATTERN)

/** Key rules of the spec: 32 to 512 printable, non-whitespace ASCII characters (0x21-0x7E). */
export const KEY_MIN_LENGTH = 32
export const KEY_MAX_LENGTH = 512
export const KeySchema = z
  .string()
  .min(KEY_MIN_LENGTH)
  .max(KEY_MAX_LENGTH)
  .regex(/^[\x21-\x7e]+$/)

/** Internal identities: `id_` and 128 random bits in base64url. */
export const IDENTITY_PATTERN = /^id_[A-Za-z0-9_-]{22}$/

/** `credentials/<username>/meta.json`. */
export const CredentialMetaSchema = z
  .object({
    version: z.literal(1),
    identity: z.string().regex(IDENTITY_PATTERN),
    policy: PolicySchema,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    rotatedAt: z.iso.datetime().nullable(),
  })
  .strict()
export type CredentialMeta = z.infer<typeof CredentialMetaSchema>

/** The issuer of an OAuth mapping: an HTTPS URL, compared as an exact string like the JWT `iss`. */
export const IssuerSchema = z
  .string()
  .min(1)
  .max(2048)
  .regex(/^https:\/\/[\x21-\x7e]+$/)
  .refine((value) => URL.canParse(value))

/** The `sub` of an OAuth mapping: 1 to 255 characters without control characters. */
export const SubjectSchema = z
  .string()
  .min(1)
  .max(255)
  .refine((value) => !hasControlCharacter(value))

function hasControlCharacter(value: string): boolean {
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}

export const OAuthMappingSchema = z
  .object({ issuer: IssuerSchema, subject: SubjectSchema, username: UsernameSchema })
  .strict()
/** One (issuer, subject) pair mapped to a named credential. */
export type OAuthMapping = z.infer<typeof OAuthMappingSchema>

/** At most this many OAuth mappings, to bound the file the gateway reloads. */
export const MAX_OAUTH_MAPPINGS = 1024

/** `credentials/oauth-map.json`. */
export const OAuthMapFileSchema = z
  .object({ version: z.literal(1), mappings: z.array(OAuthMappingSchema).max(MAX_OAUTH_MAPPINGS) })
  .strict()
export type OAuthMapFile = z.infer<typeof OAuthMapFileSchema>

/** `credentials/.generation`: rewritten by every mutation so readers notice changes cheaply. */
export const GenerationFileSchema = z
  .object({ generation: z.number().int().nonnegative(), token: z.string().min(1).max(64) })
  .strict()
export type GenerationFile = z.infer<typeof GenerationFileSchema>

/** `credentials/.lock`: who holds the store lock. */
export const LockFileSchema = z
  .object({
    pid: z.number().int().positive(),
    hostname: z.string().max(255),
    token: z.string().min(1).max(64),
    acquiredAt: z.iso.datetime(),
  })
  .strict()
export type LockFile = z.infer<typeof LockFileSchema>
