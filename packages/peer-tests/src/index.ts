export { type AuthProxy, type AuthProxyOptions, type ProxiedExchange, startAuthProxy } from './auth-proxy.ts'
export {
  type ConformanceCheck,
  type ListedScenario,
  parseRequirementList,
  readConformanceResults,
  type ScenarioResult,
} from './conformance-results.ts'
export { PeerTestsError, type PeerTestsErrorCode } from './errors.ts'
export {
  type CheckRef,
  type ConformanceJudgement,
  type ExcusedChecks,
  judgeConformance,
  type ScenarioVerdict,
  type Verdict,
} from './judge-conformance.ts'
export { compareVersions, type NodeBinary, resolvePeerNode } from './node-binary.ts'
export { redact } from './redact.ts'
export { peerEnv, resolveBin } from './resolve-bin.ts'
export { type RunOptions, type RunResult, runProcess } from './run-process.ts'
