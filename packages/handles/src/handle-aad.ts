import { HANDLE_VERSION } from './handle-format.ts'
import type { HandleKind } from './handle-kind.ts'
import { encodeLengthPrefixed } from './length-prefixed.ts'

const DOMAIN = 'agentgate/handle'

/**
 * Additional authenticated data of a handle: version, kind and the credential's internal
 * identity, length-prefixed. A handle therefore opens only as the kind, for the identity and in
 * the version it was sealed for, although none of them is stored in it.
 */
export function handleAad(kind: HandleKind, identity: string): Uint8Array {
  return encodeLengthPrefixed([DOMAIN, HANDLE_VERSION, kind, identity])
}
