import { join, resolve } from 'node:path'

/** Absolute paths of every file of a store. Usernames must be validated before they get here. */
export interface StorePaths {
  readonly stateDir: string
  /** `<stateDir>/credentials`, mode 0700. */
  readonly root: string
  /** `<stateDir>/credentials/oauth-map.json`, mode 0600. */
  readonly oauthMap: string
  /** `<stateDir>/credentials/.generation`: bumped by every mutation. */
  readonly generation: string
  /** `<stateDir>/credentials/.lock`: held during every mutation. */
  readonly lock: string
  /** `<stateDir>/handle-secret`, mode 0600. */
  readonly handleSecret: string
  /** `<stateDir>/credentials/<username>`, mode 0700. */
  userDir(username: string): string
  /** `<stateDir>/credentials/<username>/key`, mode 0600. */
  keyFile(username: string): string
  /** `<stateDir>/credentials/<username>/meta.json`, mode 0600. */
  metaFile(username: string): string
}

/** Resolves the store layout under `stateDir`. Throws `TypeError` for an empty or non-string dir. */
export function storePaths(stateDir: unknown): StorePaths {
  if (typeof stateDir !== 'string' || stateDir.length === 0) {
    throw new TypeError('stateDir must be a non-empty path')
  }
  const base = resolve(stateDir)
  const root = join(base, 'credentials')
  return {
    stateDir: base,
    root,
    oauthMap: join(root, 'oauth-map.json'),
    generation: join(root, '.generation'),
    lock: join(root, '.lock'),
    handleSecret: join(base, 'handle-secret'),
    userDir: (username) => join(root, username),
    keyFile: (username) => join(root, username, 'key'),
    metaFile: (username) => join(root, username, 'meta.json'),
  }
}

/** A store-relative path for messages (`credentials/alice/meta.json`), never an absolute one. */
export function relativeToState(paths: StorePaths, file: string): string {
  return file.startsWith(`${paths.stateDir}/`) ? file.slice(paths.stateDir.length + 1) : file
}
