import { expect } from 'vitest'
import { HANDLE_ERROR_MESSAGES, HandleError, type HandleErrorCode } from '../src/index.ts'

/** A deterministic 32-byte secret that differs per `seed`. */
export function testSecret(seed = 1): Uint8Array {
  return Uint8Array.from({ length: 32 }, (_, i) => (seed * 31 + i * 7) & 255)
}

/** A job payload shaped like the gateway's: upstream session and message ids. */
export function jobPayload(): Record<string, unknown> {
  return { s: `ses_${'0123456789abcdefghijklmnop'}`, m: `msg_${'qrstuvwxyz0123456789ABCDEF'}` }
}

/** Awaits `promise` and asserts it rejects with a HandleError of `code` and its fixed message. */
export async function expectHandleError(promise: Promise<unknown>, code: HandleErrorCode): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(HandleError)
  expect((error as HandleError).code).toBe(code)
  expect((error as HandleError).message).toBe(HANDLE_ERROR_MESSAGES[code])
  expect((error as HandleError).cause).toBeUndefined()
}

/** The handle's bytes after the `v1.` prefix. */
export function handleBytes(handle: string): Buffer {
  return Buffer.from(handle.slice(3), 'base64url')
}

/** A handle with the given bytes (canonical base64url). */
export function handleFromBytes(bytes: Uint8Array, prefix = 'v1.'): string {
  return prefix + Buffer.from(bytes).toString('base64url')
}
