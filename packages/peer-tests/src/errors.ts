export type PeerTestsErrorCode =
  | 'ERR_PEER_NODE_MISSING'
  | 'ERR_PEER_NODE_TOO_OLD'
  | 'ERR_PEER_SPAWN'
  | 'ERR_PEER_RESULTS_UNREADABLE'

const marker = Symbol.for('sallyport.peer-tests.PeerTestsError')

/** Why a peer tool could not be run or its output not be read. Messages never carry a key. */
export class PeerTestsError extends Error {
  // Read by isInstance through `in`, which works across copies of this package (Symbol.for).
  readonly [marker] = true

  constructor(
    readonly code: PeerTestsErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'PeerTestsError'
  }

  /** True for a `PeerTestsError`, also one created by another copy of this package. */
  static isInstance(value: unknown): value is PeerTestsError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}
