/** Every code a {@link PresetError} can carry. */
export type PresetErrorCode =
  | 'ERR_PRESET_INVALID_ID'
  | 'ERR_PRESET_INVALID_NAME'
  | 'ERR_PRESET_INVALID_URL'
  | 'ERR_PRESET_INVALID_MODEL'
  | 'ERR_PRESET_INVALID_KEY'
  | 'ERR_PRESET_NOT_FOUND'
  | 'ERR_PRESET_POLICY'
  | 'ERR_PRESET_RUNTIME'

const marker = Symbol.for('sallyport.config-presets.PresetError')

/**
 * The one error class of this package. Messages name preset ids, model ids and base URLs (never
 * with their credentials), never an API key.
 */
export class PresetError extends Error {
  readonly [marker] = true

  constructor(
    readonly code: PresetErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'PresetError'
  }

  /** True for a {@link PresetError}, also one from another copy of this package. */
  static isInstance(value: unknown): value is PresetError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}
