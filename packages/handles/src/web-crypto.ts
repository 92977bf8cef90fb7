// Web Crypto only, through `globalThis.crypto`: no `node:` import, so the package runs unchanged
// in other runtimes (Deno, Bun, workers).

/** The runtime's `SubtleCrypto`, typed from the global. */
export type Subtle = typeof globalThis.crypto.subtle

/** A Web Crypto `CryptoKey`. */
export type WebCryptoKey = Awaited<ReturnType<Subtle['deriveKey']>>

/** Returns `globalThis.crypto.subtle`; throws a `TypeError` when the runtime has no Web Crypto. */
export function requireSubtle(): Subtle {
  const subtle = (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle
  if (subtle === undefined) {
    throw new TypeError('Web Crypto (globalThis.crypto.subtle) is not available in this runtime')
  }
  return subtle
}

/** `length` bytes from the runtime's CSPRNG. */
export function randomBytes(length: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(length))
}
