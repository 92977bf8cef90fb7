/** Opaque handle codec: AES-256-GCM, bound to a kind and an identity, expiring. */

/** Options of `createHandleCodec`; handle kinds, their default lifetimes and the longest lifetime accepted. */
export type { CryptoBackend } from './aead.ts'
export {
  DEFAULT_LIFETIMES_MS,
  HANDLE_KINDS,
  type HandleCodecOptions,
  type HandleKind,
  isHandleKind,
  MAX_LIFETIME_MS,
} from './codec-options.ts'
export {
  createHandleCodec,
  type HandleCodec,
  MAX_CLOCK_SKEW_MS,
  type SealOptions,
} from './create-handle-codec.ts'
/** HMAC-SHA256 ownership records for upstream sessions. */
export {
  createOwnershipSigner,
  type OwnershipRecord,
  type OwnershipSigner,
  type OwnershipSignerOptions,
} from './create-ownership-signer.ts'
/** The error `open` throws, its codes and their fixed messages. */
export { HANDLE_ERROR_MESSAGES, HandleError, type HandleErrorCode } from './errors.ts'
/** Handle format limits: the `v1.` prefix and the longest accepted handle (4096). */
export { HANDLE_PREFIX, MAX_HANDLE_LENGTH } from './handle-format.ts'
/** Shortest secret accepted (32 bytes). */
export { MIN_SECRET_BYTES } from './web-crypto.ts'
