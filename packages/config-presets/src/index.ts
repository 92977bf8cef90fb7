export {
  CHECK_AGENT,
  CHECK_METADATA_KEY,
  type CheckRuntime,
  checkReadiness,
  type Readiness,
} from './check.js'
export { PresetError, type PresetErrorCode } from './errors.js'
export { type ListModelsOptions, listModels, type ModelListing } from './models.js'
export {
  type Confirmation,
  createPresets,
  OPENAI_COMPATIBLE_PACKAGE,
  type OperatorPolicy,
  type PresetInput,
  type PresetRuntime,
  type Presets,
  type SaveResult,
} from './presets.js'
export {
  baseUrlAdvice,
  checkBaseUrl,
  checkModelId,
  checkPresetId,
  checkPresetName,
  describeUrl,
} from './validate.js'
