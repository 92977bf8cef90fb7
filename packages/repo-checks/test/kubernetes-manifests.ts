import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { USERNAME_PATTERN } from '@sallyport/credentials'
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import { type IStatefulSet, StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet'
import { type INetworkPolicy, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap'
import type { IContainer } from 'kubernetes-models/v1/Container'
import {
  type IPersistentVolumeClaim,
  PersistentVolumeClaim,
} from 'kubernetes-models/v1/PersistentVolumeClaim'
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec'
import { type ISecret, Secret } from 'kubernetes-models/v1/Secret'
import { type IService, Service } from 'kubernetes-models/v1/Service'
import type { IVolume } from 'kubernetes-models/v1/Volume'
import { type StackConfig, StackConfigSchema, type StackLayout, stackLayout } from 'sallyport'
import { parseAllDocuments } from 'yaml'

// Loads deploy/kubernetes and checks it two ways: every object against the Kubernetes API schema
// of its kind (kubernetes-models: the OpenAPI schemas of the Kubernetes API compiled to
// validators, as kubeconform would use them; like kubeconform without -strict, fields the schema
// does not name are not reported), and the whole example against what the image and the CLI
// really are (Dockerfile, `sallyport.json` schema, stack layout, the CLI's arguments).

export const REPO = join(import.meta.dirname, '..', '..', '..')
export const MANIFEST_DIR = join(REPO, 'deploy', 'kubernetes')

/** One YAML document of a manifest file. */
export interface Manifest {
  /** Relative to the repository. */
  readonly file: string
  readonly doc: KubeObject
}

export interface KubeObject {
  apiVersion: string
  kind: string
  metadata: { name: string; labels?: Record<string, string> }
  [field: string]: unknown
}

/** Every `.yaml`/`.yml` under `dir`, recursively, one entry per document. */
export function loadManifests(dir: string = MANIFEST_DIR): Manifest[] {
  const files: string[] = []
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (/\.ya?ml$/.test(entry.name)) files.push(path)
    }
  }
  walk(dir)
  return files.sort().flatMap((path) => {
    const file = relative(REPO, path)
    // YAML 1.1, as kubectl reads it: `defaultMode: 0440` is octal there (decimal 440 in 1.2).
    return parseAllDocuments(readFileSync(path, 'utf8'), { version: '1.1' }).map((document) => {
      const problems = [...document.errors, ...document.warnings]
      if (problems.length > 0) throw new Error(`${file}: ${problems.map((p) => p.message).join('; ')}`)
      return { file, doc: document.toJS() as KubeObject }
    })
  })
}

type Model = new (data: never) => { validate(): void }

/** The schema of every kind the example uses; a kind not listed here is a failure, not a pass. */
const MODELS: Record<string, Model> = {
  'v1/ConfigMap': ConfigMap,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
}

/** What the Kubernetes API schema says is wrong with `doc`, or `undefined` when it is valid. */
export function schemaError(doc: KubeObject): string | undefined {
  const Model = MODELS[`${doc.apiVersion}/${doc.kind}`]
  if (Model === undefined) return `no schema for ${doc.apiVersion} ${doc.kind}`
  try {
    new Model(doc as never).validate()
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}

/** What the Dockerfile says about the image. */
export interface ImageFacts {
  readonly user: string
  readonly uid: number
  readonly gid: number
  readonly entrypoint: string[]
  readonly env: Record<string, string>
  readonly exposed: number[]
}

export function readDockerfile(text: string = readFileSync(join(REPO, 'Dockerfile'), 'utf8')): ImageFacts {
  const need = (pattern: RegExp, what: string): RegExpExecArray => {
    const match = pattern.exec(text)
    if (!match) throw new Error(`Dockerfile: no ${what}`)
    return match
  }
  const user = need(/^USER (\S+)$/m, 'USER')[1] as string
  const useradd = need(
    new RegExp(`useradd ([^\\n]*)--uid (\\d+)[^\\n]* ${user}\\s*(?:\\\\|$)`, 'm'),
    'useradd',
  )
  const group = /--gid (\S+) /.exec(useradd[0])?.[1]
  if (group === undefined) throw new Error('Dockerfile: useradd without --gid')
  const groupadd = need(new RegExp(`groupadd [^\\n]*--gid (\\d+) ${group}\\b`), 'groupadd')
  const env: Record<string, string> = {}
  for (const block of text.matchAll(/^ENV ((?:[^\n]*\\\n)*[^\n]*)$/gm)) {
    for (const pair of (block[1] as string).replace(/\\\n/g, ' ').matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g))
      env[pair[1] as string] = pair[2] as string
  }
  return {
    user,
    uid: Number(useradd[2]),
    gid: Number(groupadd[1]),
    entrypoint: JSON.parse(need(/^ENTRYPOINT (\[.*\])$/m, 'ENTRYPOINT')[1] as string) as string[],
    env,
    exposed: (need(/^EXPOSE (.+)$/m, 'EXPOSE')[1] as string).split(/\s+/).map(Number),
  }
}

/** The stack layout inside the image: `SALLYPORT_DIR` with the image's directory overrides. */
export function imageLayout(image: ImageFacts): StackLayout {
  const { SALLYPORT_DIR, SALLYPORT_MANAGED_DIR, SALLYPORT_POLICY_DIR, SALLYPORT_WORKSPACE } = image.env
  if (!SALLYPORT_DIR) throw new Error('Dockerfile: no SALLYPORT_DIR')
  return stackLayout(SALLYPORT_DIR, {
    managedDir: SALLYPORT_MANAGED_DIR,
    policyDir: SALLYPORT_POLICY_DIR,
    workspace: SALLYPORT_WORKSPACE,
  })
}

export const NAMES = {
  gateway: 'sallyport-gateway',
  runtime: 'sallyport-runtime',
  stackConfig: 'sallyport-stack',
  startSecrets: 'sallyport-secrets',
  workspace: 'sallyport-workspace',
} as const

const find = <T>(docs: readonly KubeObject[], kind: string, name: string): T | undefined =>
  docs.find((doc) => doc.kind === kind && doc.metadata.name === name) as T | undefined

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> = {}) =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([key, value]) => labels[key] === value)

const WILDCARDS = new Set(['0.0.0.0', '::'])

/** The stack file of the ConfigMap, parsed with the CLI's own schema. */
export function stackConfigOf(docs: readonly KubeObject[]): StackConfig {
  const config = find<IConfigMap>(docs, 'ConfigMap', NAMES.stackConfig)
  const text = config?.data?.['sallyport.json']
  if (text === undefined) throw new Error(`ConfigMap ${NAMES.stackConfig} has no sallyport.json`)
  return StackConfigSchema.parse(JSON.parse(text))
}

/** The CLI arguments of each container that runs the image's entrypoint (no `command`). */
export function cliInvocations(docs: readonly KubeObject[]): Array<{ where: string; args: string[] }> {
  return docs.flatMap((doc) => {
    const spec = podSpecOf(doc)
    if (!spec) return []
    return [...(spec.initContainers ?? []), ...spec.containers]
      .filter((container) => container.command === undefined)
      .map((container) => ({ where: `${doc.metadata.name}/${container.name}`, args: container.args ?? [] }))
  })
}

function podSpecOf(doc: KubeObject): IPodSpec | undefined {
  if (doc.kind !== 'Deployment' && doc.kind !== 'StatefulSet') return undefined
  return (doc as unknown as IDeployment | IStatefulSet).spec?.template.spec
}

/**
 * Everything in the example that does not match the image, the CLI or the rest of the example:
 * one line per problem, empty when all is consistent.
 */
export function consistencyProblems(docs: readonly KubeObject[], image: ImageFacts): string[] {
  const problems: string[] = []
  const problem = (text: string): void => {
    problems.push(text)
  }
  const layout = imageLayout(image)
  let stack: StackConfig
  try {
    stack = stackConfigOf(docs)
  } catch (error) {
    return [`the stack file: ${(error as Error).message.slice(0, 300)}`]
  }
  const gateway = find<IDeployment>(docs, 'Deployment', NAMES.gateway)
  const runtime = find<IStatefulSet>(docs, 'StatefulSet', NAMES.runtime)
  const gatewayService = find<IService>(docs, 'Service', NAMES.gateway)
  const runtimeService = find<IService>(docs, 'Service', NAMES.runtime)
  if (!gateway || !runtime || !gatewayService || !runtimeService)
    return ['the gateway Deployment, the runtime StatefulSet and a Service for each must exist']
  const gatewayPod = gateway.spec?.template.spec
  const runtimePod = runtime.spec?.template.spec
  if (!gatewayPod || !runtimePod) return ['a workload without a pod spec']
  const gatewayLabels = gateway.spec?.template.metadata?.labels ?? {}
  const runtimeLabels = runtime.spec?.template.metadata?.labels ?? {}

  // The stack file: what the pods bind.
  if (!WILDCARDS.has(stack.gateway.host))
    problem(`gateway.host ${stack.gateway.host}: a gateway pod must listen on its pod IP`)
  if (!WILDCARDS.has(stack.native.host))
    problem(`native.host ${stack.native.host}: the runtime's native server must listen beyond loopback`)
  if (typeof stack.native.port !== 'number')
    problem('native.port must be a number the gateways are pointed at')
  if (!image.exposed.includes(stack.gateway.port))
    problem(`gateway.port ${stack.gateway.port} is not what the image exposes (${image.exposed.join(', ')})`)

  // Pods, containers, volumes.
  const images = new Set<string>()
  // A StatefulSet's claim templates are volumes of its pods as well.
  const claimed: IVolume[] = (runtime.spec?.volumeClaimTemplates ?? []).map((claim) => ({
    name: claim.metadata?.name ?? '',
    persistentVolumeClaim: { claimName: claim.metadata?.name ?? '' },
  }))
  for (const [name, pod, extra] of [
    [NAMES.gateway, gatewayPod, []],
    [NAMES.runtime, runtimePod, claimed],
  ] as const) {
    const security = pod.securityContext ?? {}
    if (pod.automountServiceAccountToken !== false)
      problem(`${name}: automountServiceAccountToken must be false`)
    if (pod.enableServiceLinks !== false)
      problem(`${name}: enableServiceLinks must be false (service links set SALLYPORT_* variables)`)
    if (security.runAsNonRoot !== true) problem(`${name}: runAsNonRoot must be true`)
    if (security.runAsUser !== image.uid) problem(`${name}: runAsUser must be the image's uid ${image.uid}`)
    if (security.runAsGroup !== image.gid) problem(`${name}: runAsGroup must be the image's gid ${image.gid}`)
    if (security.fsGroup !== image.gid)
      problem(
        `${name}: fsGroup must be ${image.gid}, or uid ${image.uid} cannot read the root-owned Secret files`,
      )
    if (security.seccompProfile?.type !== 'RuntimeDefault')
      problem(`${name}: seccompProfile must be RuntimeDefault`)
    const volumes = new Map([...(pod.volumes ?? []), ...extra].map((volume) => [volume.name, volume]))
    for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
      const where = `${name}/${container.name}`
      images.add(container.image ?? '')
      const context = container.securityContext ?? {}
      if (context.allowPrivilegeEscalation !== false)
        problem(`${where}: allowPrivilegeEscalation must be false`)
      if (context.readOnlyRootFilesystem !== true) problem(`${where}: readOnlyRootFilesystem must be true`)
      if (!context.capabilities?.drop?.includes('ALL')) problem(`${where}: capabilities must drop ALL`)
      for (const kind of ['requests', 'limits'] as const)
        for (const resource of ['cpu', 'memory'])
          if (container.resources?.[kind]?.[resource] === undefined)
            problem(`${where}: no ${kind}.${resource}`)
      if (container.command === undefined && container.args?.[0] === undefined)
        problem(`${where}: runs the CLI without a command`)
      for (const mount of container.volumeMounts ?? []) {
        const volume = volumes.get(mount.name)
        if (!volume) {
          problem(`${where}: mounts ${mount.name}, which the pod does not declare`)
          continue
        }
        if ((volume.secret || volume.projected || volume.configMap) && mount.readOnly !== true)
          problem(`${where}: ${mount.mountPath} (a Secret or ConfigMap) must be mounted readOnly`)
        if (volume.configMap && mount.subPath !== undefined) {
          const data = find<IConfigMap>(docs, 'ConfigMap', volume.configMap.name ?? '')?.data ?? {}
          if (!(mount.subPath in data))
            problem(`${where}: ConfigMap ${volume.configMap.name} has no ${mount.subPath}`)
        }
      }
    }
    for (const volume of volumes.values()) problems.push(...secretVolumeProblems(docs, name, volume))
  }
  if (images.size !== 1) problem(`every container must run the one image, not ${[...images].join(', ')}`)

  problems.push(
    ...gatewayProblems(docs, {
      pod: gatewayPod,
      labels: gatewayLabels,
      service: gatewayService,
      layout,
      stack,
    }),
    ...runtimeProblems(docs, {
      runtime,
      pod: runtimePod,
      labels: runtimeLabels,
      service: runtimeService,
      layout,
      stack,
    }),
    ...networkPolicyProblems(docs, { gatewayLabels, runtimeLabels, nativePort: stack.native.port as number }),
  )
  const workspace = find<IPersistentVolumeClaim>(docs, 'PersistentVolumeClaim', NAMES.workspace)
  if (!workspace?.spec?.accessModes?.includes('ReadWriteMany'))
    problem(`PersistentVolumeClaim ${NAMES.workspace}: the runtime and the gateways share it: ReadWriteMany`)
  return problems
}

/** A Secret volume (or a projected one of Secrets): every key it names exists; mode 0440. */
function secretVolumeProblems(docs: readonly KubeObject[], pod: string, volume: IVolume): string[] {
  const problems: string[] = []
  const sources = volume.secret
    ? [{ name: volume.secret.secretName, items: volume.secret.items, mode: volume.secret.defaultMode }]
    : (volume.projected?.sources ?? [])
        .filter((source) => source.secret)
        .map((source) => ({
          name: source.secret?.name,
          items: source.secret?.items,
          mode: volume.projected?.defaultMode,
        }))
  for (const source of sources) {
    const where = `${pod}: volume ${volume.name}`
    const secret = find<ISecret>(docs, 'Secret', source.name ?? '')
    if (!secret) {
      problems.push(`${where}: no Secret ${source.name} in the example`)
      continue
    }
    const keys = new Set([...Object.keys(secret.data ?? {}), ...Object.keys(secret.stringData ?? {})])
    for (const item of source.items ?? [])
      if (!keys.has(item.key)) problems.push(`${where}: Secret ${source.name} has no key ${item.key}`)
    if (source.mode !== 0o440)
      problems.push(
        `${where}: defaultMode ${source.mode?.toString(8)} (0440: the kubelet's mode with an fsGroup)`,
      )
  }
  return problems
}

function mountsOf(container: IContainer | undefined) {
  return new Map((container?.volumeMounts ?? []).map((mount) => [mount.mountPath, mount]))
}

/** The values of `for name in a b c; do` in a script. */
function loopNames(script: string): string[] {
  return (/for name in ([^;]+); do/.exec(script)?.[1] ?? '').trim().split(/\s+/).filter(Boolean)
}

const START_SECRETS = (layout: StackLayout): Map<string, string> =>
  new Map(
    [layout.handleSecret, layout.nativePassword, layout.moderatorPassword].map((path) => [
      path.slice(layout.stateDir.length + 1),
      path,
    ]),
  )

/** The init script that copies the start secrets: 0600 files at the layout's paths, keys that exist. */
function copyScriptProblems(
  docs: readonly KubeObject[],
  where: string,
  container: IContainer | undefined,
  pod: IPodSpec,
  layout: StackLayout,
): string[] {
  if (!container) return [`${where}: missing`]
  const problems: string[] = []
  const script = container.args?.join('\n') ?? ''
  const wanted = START_SECRETS(layout)
  const names = loopNames(script)
  if (names.sort().join() !== [...wanted.keys()].sort().join())
    problems.push(`${where}: copies ${names.join(', ')}; the CLI reads ${[...wanted.keys()].join(', ')}`)
  const secretsMount = (container.volumeMounts ?? []).find(
    (mount) =>
      pod.volumes?.find((volume) => volume.name === mount.name)?.secret?.secretName === NAMES.startSecrets,
  )
  if (!secretsMount) return [...problems, `${where}: does not mount Secret ${NAMES.startSecrets}`]
  const copy = `install -m 0600 "${secretsMount.mountPath}/$name" "${layout.stateDir}/$name"`
  if (!script.includes(copy))
    problems.push(`${where}: must copy each with \`${copy}\` (the CLI wants 0600 files)`)
  const secret = find<ISecret>(docs, 'Secret', NAMES.startSecrets)
  const keys = new Set([...Object.keys(secret?.data ?? {}), ...Object.keys(secret?.stringData ?? {})])
  for (const name of names)
    if (!keys.has(name)) problems.push(`${where}: Secret ${NAMES.startSecrets} has no key ${name}`)
  if (!script.includes(`mkdir -p ${layout.credentialsDir}`))
    problems.push(`${where}: must create ${layout.credentialsDir}`)
  return problems
}

function gatewayProblems(
  docs: readonly KubeObject[],
  input: {
    pod: IPodSpec
    labels: Record<string, string>
    service: IService
    layout: StackLayout
    stack: StackConfig
  },
): string[] {
  const { pod, labels, service, layout, stack } = input
  const problems: string[] = []
  const main = pod.containers.find((container) => container.name === 'gateway')
  if (!main) return [`${NAMES.gateway}: no container "gateway"`]
  const where = `${NAMES.gateway}/gateway`
  const args = main.args ?? []
  if (args[0] !== 'serve') problems.push(`${where}: must run \`serve\`, not ${args[0]}`)
  const nativeUrl = args[args.indexOf('--native-url') + 1]
  if (!args.includes('--native-url') || nativeUrl === undefined) problems.push(`${where}: no --native-url`)
  else {
    const url = new URL(nativeUrl)
    if (url.protocol !== 'http:' || url.hostname !== NAMES.runtime || Number(url.port) !== stack.native.port)
      problems.push(`${where}: --native-url ${nativeUrl} is not http://${NAMES.runtime}:${stack.native.port}`)
  }
  const http = main.ports?.find((port) => port.name === 'http')
  if (http?.containerPort !== stack.gateway.port)
    problems.push(`${where}: port http ${http?.containerPort} is not gateway.port ${stack.gateway.port}`)
  const readiness = main.readinessProbe?.httpGet
  if (readiness?.path !== '/health') problems.push(`${where}: the readiness probe must GET /health`)
  if (readiness?.port !== 'http' && readiness?.port !== stack.gateway.port)
    problems.push(`${where}: the readiness probe must ask the gateway's port`)
  if (!main.livenessProbe) problems.push(`${where}: no liveness probe`)
  const mounts = mountsOf(main)
  for (const mount of mounts.values())
    if (mount.mountPath !== '/tmp' && mount.readOnly !== true)
      problems.push(`${where}: ${mount.mountPath} must be read-only (a gateway writes nothing)`)
  const volumeOf = (path: string) => pod.volumes?.find((volume) => volume.name === mounts.get(path)?.name)
  if (!volumeOf(layout.root)?.emptyDir)
    problems.push(`${where}: ${layout.root} must be the pod's own emptyDir`)
  if (!volumeOf(layout.workspace)?.persistentVolumeClaim)
    problems.push(`${where}: ${layout.workspace} must be the shared workspace`)
  // Mounted from the Secrets themselves (not copied), so an update reaches the running gateway.
  const credentials = volumeOf(layout.credentialsDir)
  const sources = credentials?.projected?.sources ?? []
  if (!credentials?.projected || sources.some((source) => !source.secret))
    problems.push(`${where}: ${layout.credentialsDir} must be a projected volume of Secrets`)
  const files = new Map<string, Set<string>>()
  for (const item of sources.flatMap((source) => source.secret?.items ?? [])) {
    const [username, file, ...rest] = item.path.split('/')
    if (
      !username ||
      !USERNAME_PATTERN.test(username) ||
      !['key', 'meta.json'].includes(file ?? '') ||
      rest.length
    )
      problems.push(`${where}: credentials item ${item.path} is not <username>/key or <username>/meta.json`)
    else files.set(username, (files.get(username) ?? new Set()).add(file as string))
  }
  if (files.size === 0) problems.push(`${where}: no credential is mounted`)
  for (const [username, got] of files)
    if (got.size !== 2) problems.push(`${where}: credential ${username} needs both key and meta.json`)

  const init = pod.initContainers?.find((container) => container.name === 'stack')
  problems.push(...copyScriptProblems(docs, `${NAMES.gateway}/stack`, init, pod, layout))
  const configMount = (init?.volumeMounts ?? []).find(
    (mount) =>
      pod.volumes?.find((volume) => volume.name === mount.name)?.configMap?.name === NAMES.stackConfig,
  )
  const copyConfig = `install -m 0600 ${configMount?.mountPath}/sallyport.json ${layout.configFile}`
  if (!init?.args?.join('\n').includes(copyConfig))
    problems.push(`${NAMES.gateway}/stack: must run \`${copyConfig}\``)
  if (mountsOf(init).get(layout.root)?.name !== mounts.get(layout.root)?.name)
    problems.push(`${NAMES.gateway}/stack: must build ${layout.root} in the volume the gateway mounts there`)

  if (!matches(service.spec?.selector, labels))
    problems.push(`Service ${NAMES.gateway}: selects no gateway pod`)
  const servicePort = service.spec?.ports?.[0]
  if (servicePort?.targetPort !== 'http' || servicePort.port !== stack.gateway.port)
    problems.push(`Service ${NAMES.gateway}: must forward ${stack.gateway.port} to port http`)
  return problems
}

function runtimeProblems(
  docs: readonly KubeObject[],
  input: {
    runtime: IStatefulSet
    pod: IPodSpec
    labels: Record<string, string>
    service: IService
    layout: StackLayout
    stack: StackConfig
  },
): string[] {
  const { runtime, pod, labels, service, layout, stack } = input
  const problems: string[] = []
  if (runtime.spec?.replicas !== 1)
    problems.push(`${NAMES.runtime}: exactly one replica (it holds the sessions)`)
  if (runtime.spec?.serviceName !== NAMES.runtime)
    problems.push(`${NAMES.runtime}: serviceName must be ${NAMES.runtime}`)
  const main = pod.containers.find((container) => container.name === 'runtime')
  if (!main) return [...problems, `${NAMES.runtime}: no container "runtime"`]
  const where = `${NAMES.runtime}/runtime`
  if (main.args?.[0] !== 'up')
    problems.push(`${where}: must run \`up\` (the CLI runs the runtime only under up)`)
  const host = main.env?.find((variable) => variable.name === 'SALLYPORT_GATEWAY_HOST')?.value
  if (host !== '127.0.0.1')
    problems.push(`${where}: its own gateway must be bound to loopback (SALLYPORT_GATEWAY_HOST)`)
  const native = main.ports?.find((port) => port.name === 'native')
  if (native?.containerPort !== stack.native.port)
    problems.push(`${where}: port native ${native?.containerPort} is not native.port ${stack.native.port}`)
  // The layer table of compose.yaml: these paths, read-only unless listed as writable.
  const writable = new Set([
    layout.stateDir,
    join(layout.userConfigDir, 'opencode.json'),
    layout.akmDir,
    layout.knowledgeDir,
    layout.workspace,
    '/tmp',
  ])
  const readOnly = new Set([
    layout.configFile,
    layout.managedDir,
    layout.moderatorDir,
    layout.policyDir,
    layout.userConfigDir,
  ])
  const mounts = mountsOf(main)
  for (const path of [...writable, ...readOnly])
    if (!mounts.has(path)) problems.push(`${where}: nothing mounted at ${path}`)
  for (const mount of mounts.values()) {
    if (writable.has(mount.mountPath) === (mount.readOnly === true))
      problems.push(
        `${where}: ${mount.mountPath} must be ${writable.has(mount.mountPath) ? 'writable' : 'read-only'}`,
      )
    if (!writable.has(mount.mountPath) && !readOnly.has(mount.mountPath))
      problems.push(`${where}: ${mount.mountPath} is not part of the stack layout`)
  }
  const inits = pod.initContainers ?? []
  const secretsAt = inits.findIndex((container) => container.name === 'secrets')
  const initAt = inits.findIndex((container) => container.args?.[0] === 'init')
  problems.push(...copyScriptProblems(docs, `${NAMES.runtime}/secrets`, inits[secretsAt], pod, layout))
  if (initAt < 0 || !inits[initAt]?.args?.includes('--container'))
    problems.push(`${NAMES.runtime}: an init container must run \`init --container\``)
  else if (secretsAt < 0 || secretsAt > initAt)
    problems.push(`${NAMES.runtime}: the secrets must be copied before \`init\` (which would create others)`)
  if (service.spec?.clusterIP !== 'None')
    problems.push(`Service ${NAMES.runtime}: must be headless (the StatefulSet's)`)
  if (!matches(service.spec?.selector, labels))
    problems.push(`Service ${NAMES.runtime}: selects no runtime pod`)
  const port = service.spec?.ports?.[0]
  if (port?.port !== stack.native.port || port.targetPort !== 'native')
    problems.push(`Service ${NAMES.runtime}: must forward ${stack.native.port} to port native`)
  return problems
}

/** Only gateway pods reach the runtime, and only its native port. */
function networkPolicyProblems(
  docs: readonly KubeObject[],
  input: { gatewayLabels: Record<string, string>; runtimeLabels: Record<string, string>; nativePort: number },
): string[] {
  const policies = docs.filter((doc) => doc.kind === 'NetworkPolicy') as unknown as INetworkPolicy[]
  const guarding = policies.filter((policy) =>
    matches(policy.spec?.podSelector?.matchLabels, input.runtimeLabels),
  )
  if (guarding.length === 0) return ['no NetworkPolicy selects the runtime pods']
  const problems: string[] = []
  for (const policy of guarding) {
    const name = `NetworkPolicy ${policy.metadata?.name}`
    if (!policy.spec?.policyTypes?.includes('Ingress')) problems.push(`${name}: must restrict Ingress`)
    const rules = policy.spec?.ingress ?? []
    if (rules.length === 0) problems.push(`${name}: lets no gateway in`)
    for (const rule of rules) {
      const from = rule.from ?? []
      if (from.length === 0) problems.push(`${name}: a rule without "from" lets every pod in`)
      for (const peer of from)
        if (
          peer.ipBlock ||
          peer.namespaceSelector ||
          !matches(peer.podSelector?.matchLabels, input.gatewayLabels)
        )
          problems.push(`${name}: lets in more than the gateway pods`)
      const ports = rule.ports ?? []
      if (ports.length === 0 || ports.some((port) => port.port !== input.nativePort))
        problems.push(`${name}: must open port ${input.nativePort} only`)
    }
  }
  return problems
}
