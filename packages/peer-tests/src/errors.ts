export type PeerTestsErrorCode =
  | 'ERR_PEER_NODE_MISSING'
  | 'ERR_PEER_NODE_TOO_OLD'
  | 'ERR_PEER_SPAWN'
  | 'ERR_PEER_RESULTS_UNREADABLE'

/** Why a peer tool could not be run or its output not be read. Messages never carry a key. */
export class PeerTestsError extends Error {
  constructor(
    readonly code: PeerTestsErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'PeerTestsError'
  }
}
