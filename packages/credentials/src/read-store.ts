import { readdir, readFile, stat } from 'node:fs/promises'
import type { z } from 'zod'
import { CredentialError } from './errors.ts'
import {
  type CredentialMeta,
  CredentialMetaSchema,
  type GenerationFile,
  GenerationFileSchema,
  KeySchema,
  type OAuthMapFile,
  OAuthMapFileSchema,
  USERNAME_PATTERN,
} from './schemas.ts'
import { relativeToState, type StorePaths } from './store-paths.ts'

/** One credential as stored, key included. Internal: never leaves the package except as a digest. */
export interface StoredCredential {
  readonly username: string
  readonly meta: CredentialMeta
  readonly key: string
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

function ioError(paths: StorePaths, file: string, cause: unknown): CredentialError {
  const code = (cause as NodeJS.ErrnoException).code ?? 'unknown error'
  return new CredentialError('ERR_CREDENTIALS_IO', `cannot read ${relativeToState(paths, file)} (${code})`, {
    cause,
  })
}

function corrupt(paths: StorePaths, file: string, what: string, cause?: unknown): CredentialError {
  return new CredentialError(
    'ERR_CREDENTIALS_CORRUPT',
    `${relativeToState(paths, file)} is not a valid ${what}; restore it from a backup or remove it`,
    cause === undefined ? undefined : { cause },
  )
}

async function readText(paths: StorePaths, file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    if (isMissing(error)) return undefined
    throw ioError(paths, file, error)
  }
}

async function readJson<S extends z.ZodType>(
  paths: StorePaths,
  file: string,
  schema: S,
  what: string,
): Promise<z.infer<S> | undefined> {
  const text = await readText(paths, file)
  if (text === undefined) return undefined
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    throw corrupt(paths, file, what, error)
  }
  const parsed = schema.safeParse(data)
  if (!parsed.success) throw corrupt(paths, file, what, parsed.error)
  return parsed.data
}

async function dirExists(paths: StorePaths, dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory()
  } catch (error) {
    if (isMissing(error)) return false
    throw ioError(paths, dir, error)
  }
}

/**
 * Usernames present in the store, sorted. Entries that are not a valid username (the store's
 * dot-files, temporary directories, anything hand-made with another name) are ignored.
 */
export async function listUsernames(paths: StorePaths): Promise<string[]> {
  try {
    const entries = await readdir(paths.root, { withFileTypes: true })
    return entries
      .filter((entry) => entry.isDirectory() && USERNAME_PATTERN.test(entry.name))
      .map((entry) => entry.name)
      .sort()
  } catch (error) {
    if (isMissing(error)) return []
    throw ioError(paths, paths.root, error)
  }
}

/**
 * The metadata of `username`, or `undefined` when there is no such credential. A credential
 * directory without a valid `meta.json` is `ERR_CREDENTIALS_CORRUPT`.
 */
export async function readMeta(paths: StorePaths, username: string): Promise<CredentialMeta | undefined> {
  const file = paths.metaFile(username)
  const meta = await readJson(paths, file, CredentialMetaSchema, 'credential metadata file')
  if (meta !== undefined) return meta
  // Gone between listing and reading (removed by a rename) is not corruption.
  if (!(await dirExists(paths, paths.userDir(username)))) return undefined
  throw corrupt(paths, file, 'credential metadata file (it is missing)')
}

/**
 * The key of `username`, or `undefined` when there is no such credential. One trailing newline
 * is tolerated (a key file written with `echo`); anything else that breaks the key rules is
 * `ERR_CREDENTIALS_CORRUPT`. The message never contains the file's content.
 */
export async function readKey(paths: StorePaths, username: string): Promise<string | undefined> {
  const file = paths.keyFile(username)
  const text = await readText(paths, file)
  if (text === undefined) {
    if (!(await dirExists(paths, paths.userDir(username)))) return undefined
    throw corrupt(paths, file, 'key file (it is missing)')
  }
  const key = text.replace(/\r?\n$/, '')
  // No zod error as cause: its issues would describe the secret's shape.
  if (!KeySchema.safeParse(key).success)
    throw corrupt(paths, file, 'key file (32-512 printable ASCII characters)')
  return key
}

/** The OAuth mappings file; an absent file is an empty list. */
export async function readOAuthMap(paths: StorePaths): Promise<OAuthMapFile> {
  const file = await readJson(paths, paths.oauthMap, OAuthMapFileSchema, 'OAuth mapping file')
  return file ?? { version: 1, mappings: [] }
}

/** The generation file, or `undefined` before the first mutation. */
export async function readGeneration(paths: StorePaths): Promise<GenerationFile | undefined> {
  return readJson(paths, paths.generation, GenerationFileSchema, 'generation file')
}

/** What {@link readSnapshot} read, and what it had to leave out. */
export interface StoreSnapshot {
  readonly credentials: StoredCredential[]
  /** Empty when `oauth-map.json` could not be read (OAuth then fails closed). */
  readonly mappings: OAuthMapFile['mappings']
  /**
   * One `ERR_CREDENTIALS_CORRUPT`/`ERR_CREDENTIALS_IO` error per credential directory left out
   * and for an unreadable `oauth-map.json`. Empty when everything was read.
   */
  readonly problems: CredentialError[]
}

/**
 * Everything the key resolver needs, read without the lock (every single write is atomic). A
 * damaged credential directory or OAuth mapping file does not stop the rest from loading (so a
 * removal or rotation elsewhere still takes effect): it is left out and listed in `problems`.
 * Throws only when the store itself cannot be listed.
 */
export async function readSnapshot(paths: StorePaths): Promise<StoreSnapshot> {
  const credentials: StoredCredential[] = []
  const problems: CredentialError[] = []
  for (const username of await listUsernames(paths)) {
    try {
      const meta = await readMeta(paths, username)
      const key = meta === undefined ? undefined : await readKey(paths, username)
      if (meta !== undefined && key !== undefined) credentials.push({ username, meta, key })
    } catch (error) {
      if (!CredentialError.isInstance(error)) throw error
      problems.push(error)
    }
  }
  let mappings: OAuthMapFile['mappings'] = []
  try {
    mappings = (await readOAuthMap(paths)).mappings
  } catch (error) {
    if (!CredentialError.isInstance(error)) throw error
    problems.push(error)
  }
  return { credentials, mappings, problems }
}
