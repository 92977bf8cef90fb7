import type { Dirent } from 'node:fs'
import { readdir, readFile, readlink, stat } from 'node:fs/promises'
import { join } from 'node:path'
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
 * The link of a Kubernetes volume's current data (Secret, ConfigMap and projected volumes are
 * written by the kubelet's "atomic writer"): `..data` points at a timestamped sibling directory
 * `..2006_01_02_15_04_05.<digits>` holding the files, and every name the volume shows is a
 * symlink `<name> -> ..data/<name>`. An update writes a new timestamped directory and renames a
 * new link over `..data`, so the whole volume changes in one step.
 */
const PROJECTION_DATA_LINK = '..data'
const PROJECTION_DIR_PATTERN = /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\d+$/

/**
 * When `credentials/` is a Kubernetes Secret (or projected) volume, the name of the timestamped
 * directory its `..data` link points at now: it changes with every update of the Secret, so the
 * key resolver uses it as a change signal (nobody bumps `.generation` in a read-only volume).
 * `undefined` for an ordinary store (no `..data` link, or one of another shape).
 */
export async function projectionTarget(paths: StorePaths): Promise<string | undefined> {
  try {
    const target = await readlink(join(paths.root, PROJECTION_DATA_LINK))
    return PROJECTION_DIR_PATTERN.test(target) ? target : undefined
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (isMissing(error) || code === 'EINVAL') return undefined // absent, or not a link
    throw ioError(paths, join(paths.root, PROJECTION_DATA_LINK), error)
  }
}

/**
 * Whether the symlink `name` in a Kubernetes volume is the kubelet's own link to a credential
 * directory: exactly `..data/<name>`, resolving to a directory now (a link whose name left the
 * Secret dangles until the kubelet prunes it: that credential is gone).
 */
async function isProjectedDirectory(paths: StorePaths, name: string): Promise<boolean> {
  const link = join(paths.root, name)
  try {
    if ((await readlink(link)) !== `${PROJECTION_DATA_LINK}/${name}`) return false
    return (await stat(link)).isDirectory()
  } catch (error) {
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'EINVAL') return false
    throw ioError(paths, link, error)
  }
}

/**
 * Usernames present in the store, sorted. Entries that are not a valid username (the store's
 * dot-files, temporary directories, anything hand-made with another name) are ignored, and so
 * are symlinks: a credential is a real directory of `credentials/`.
 *
 * One exception, for a store mounted from a Kubernetes Secret volume (see
 * {@link projectionTarget}): there every credential directory is necessarily a kubelet link
 * `<name> -> ..data/<name>`, so such a link counts when the volume's `..data` link has the
 * kubelet's shape. Nothing else is followed: a link to anywhere else, or any link in a store
 * without `..data`, is still ignored, so an ordinary stack lists exactly what it listed before.
 * This grants no one anything new: whoever can create these links in `credentials/` can create
 * a real credential directory there just as well.
 */
export async function listUsernames(paths: StorePaths): Promise<string[]> {
  let entries: Dirent[]
  try {
    entries = await readdir(paths.root, { withFileTypes: true })
  } catch (error) {
    if (isMissing(error)) return []
    throw ioError(paths, paths.root, error)
  }
  const projected =
    entries.some((entry) => entry.name === PROJECTION_DATA_LINK && entry.isSymbolicLink()) &&
    (await projectionTarget(paths)) !== undefined
  const names: string[] = []
  for (const entry of entries) {
    if (!USERNAME_PATTERN.test(entry.name)) continue
    if (entry.isDirectory()) names.push(entry.name)
    else if (projected && entry.isSymbolicLink() && (await isProjectedDirectory(paths, entry.name)))
      names.push(entry.name)
  }
  return names.sort()
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
