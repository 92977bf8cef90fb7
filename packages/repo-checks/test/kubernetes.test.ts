import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IStatefulSet } from 'kubernetes-models/apps/v1/StatefulSet'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap'
import type { IContainer } from 'kubernetes-models/v1/Container'
import type { ISecret } from 'kubernetes-models/v1/Secret'
import { EXIT, main } from 'sallyport'
import { describe, expect, it, onTestFinished } from 'vitest'
import {
  cliInvocations,
  consistencyProblems,
  type KubeObject,
  loadManifests,
  NAMES,
  readDockerfile,
  schemaError,
} from './kubernetes-manifests.ts'

// deploy/kubernetes, the Kubernetes example of N gateways in front of one runtime, checked in CI
// without a cluster: every object against the Kubernetes API schema of its kind, and the example
// against the image it runs (Dockerfile) and the CLI it calls (stack file schema, stack layout,
// command-line arguments). Each check is shown to fail on a broken copy.

const MANIFESTS = loadManifests()
const DOCS = MANIFESTS.map((manifest) => manifest.doc)
const IMAGE = readDockerfile()

function the<T>(docs: KubeObject[], kind: string, name: string): T {
  const doc = docs.find((candidate) => candidate.kind === kind && candidate.metadata.name === name)
  if (!doc) throw new Error(`no ${kind} ${name}`)
  return doc as unknown as T
}

function container(docs: KubeObject[], kind: 'Deployment' | 'StatefulSet', name: string): IContainer {
  const workload = the<IDeployment | IStatefulSet>(
    docs,
    kind,
    kind === 'Deployment' ? NAMES.gateway : NAMES.runtime,
  )
  const spec = workload.spec?.template.spec
  const found = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].find((c) => c.name === name)
  if (!found) throw new Error(`no container ${name}`)
  return found
}

const gateway = (docs: KubeObject[]) => container(docs, 'Deployment', 'gateway')
const gatewayPod = (docs: KubeObject[]) => {
  const spec = the<IDeployment>(docs, 'Deployment', NAMES.gateway).spec?.template.spec
  if (!spec) throw new Error('no pod spec')
  return spec
}
const runtimePod = (docs: KubeObject[]) => {
  const spec = the<IStatefulSet>(docs, 'StatefulSet', NAMES.runtime).spec?.template.spec
  if (!spec) throw new Error('no pod spec')
  return spec
}

describe('deploy/kubernetes against the Kubernetes API schemas (kubernetes-models)', () => {
  it('sees the example (the checks cannot pass on an empty list)', () => {
    const kinds = new Set(DOCS.map((doc) => doc.kind))
    for (const kind of [
      'ConfigMap',
      'Secret',
      'Service',
      'Deployment',
      'StatefulSet',
      'NetworkPolicy',
      'PersistentVolumeClaim',
    ])
      expect(kinds, kind).toContain(kind)
    expect(DOCS.length).toBeGreaterThanOrEqual(10)
  })

  it.each(
    MANIFESTS.map((manifest) => [
      `${manifest.file}: ${manifest.doc.kind} ${manifest.doc.metadata.name}`,
      manifest.doc,
    ]),
  )('%s is valid', (_name, doc) => {
    expect(schemaError(doc)).toBeUndefined()
  })

  it.each([
    [
      'a container port given as a string',
      (docs: KubeObject[]) => {
        const port = gateway(docs).ports?.[0]
        if (port) (port as { containerPort: unknown }).containerPort = '8787'
      },
      /containerPort must be integer/,
    ],
    [
      'a mount whose readOnly is not a boolean',
      (docs: KubeObject[]) => {
        const mount = gateway(docs).volumeMounts?.[0]
        if (mount) (mount as { readOnly: unknown }).readOnly = 'yes'
      },
      /readOnly must be boolean/,
    ],
    [
      'a Deployment without its selector',
      (docs: KubeObject[]) => {
        delete (the<IDeployment>(docs, 'Deployment', NAMES.gateway).spec as { selector?: unknown }).selector
      },
      /spec must have required property selector/,
    ],
    [
      'a container without a name',
      (docs: KubeObject[]) => {
        delete (gateway(docs) as { name?: unknown }).name
      },
      /containers\/0 must have required property name/,
    ],
    [
      'NetworkPolicy ingress that is not a list',
      (docs: KubeObject[]) => {
        const policy = the<INetworkPolicy>(docs, 'NetworkPolicy', NAMES.runtime)
        ;(policy.spec as { ingress: unknown }).ingress = { from: [] }
      },
      /ingress must be array/,
    ],
    [
      'a misspelt kind',
      (docs: KubeObject[]) => {
        the<KubeObject>(docs, 'StatefulSet', NAMES.runtime).kind = 'StatefullSet'
      },
      /no schema for apps\/v1 StatefullSet/,
    ],
  ])('rejects a broken copy: %s', (_name, breakIt, expected) => {
    const docs = structuredClone(DOCS)
    breakIt(docs)
    const errors = docs.map(schemaError).filter((error) => error !== undefined)
    expect(errors).toContainEqual(expect.stringMatching(expected))
  })
})

describe('deploy/kubernetes against the image and the CLI', () => {
  it('reads the Dockerfile: a non-root user, the CLI as entrypoint, the stack at SALLYPORT_DIR', () => {
    expect(IMAGE.uid).toBeGreaterThan(0)
    expect(IMAGE.gid).toBeGreaterThan(0)
    expect(IMAGE.entrypoint.at(-1)).toMatch(/\/sallyport\/dist\/bin\.js$/)
    expect(IMAGE.env.SALLYPORT_DIR).toMatch(/^\//)
    expect(IMAGE.env.SALLYPORT_WORKSPACE).toMatch(/^\//)
    expect(IMAGE.exposed.length).toBeGreaterThan(0)
  })

  it('is consistent: ports, probe, paths, user, Secret keys, read-only mounts, network policy', () => {
    expect(consistencyProblems(DOCS, IMAGE)).toEqual([])
  })

  const stackFile = (docs: KubeObject[], edit: (config: Record<string, Record<string, unknown>>) => void) => {
    const map = the<IConfigMap>(docs, 'ConfigMap', NAMES.stackConfig)
    const data = map.data as Record<string, string>
    const config = JSON.parse(data['sallyport.json'] as string)
    edit(config)
    data['sallyport.json'] = JSON.stringify(config)
  }

  it.each([
    [
      'a readiness probe on another path',
      (docs: KubeObject[]) => {
        const probe = gateway(docs).readinessProbe?.httpGet
        if (probe) probe.path = '/healthz'
      },
      /readiness probe must GET \/health/,
    ],
    [
      'a gateway port other than the stack file and the image say',
      (docs: KubeObject[]) => {
        const port = gateway(docs).ports?.[0]
        if (port) port.containerPort = 8080
      },
      /port http 8080 is not gateway.port 8787/,
    ],
    [
      'the native URL on another port than the runtime listens on',
      (docs: KubeObject[]) => {
        const args = gateway(docs).args ?? []
        args[args.indexOf('--native-url') + 1] = `http://${NAMES.runtime}:3811`
      },
      /--native-url http:\/\/sallyport-runtime:3811/,
    ],
    [
      'a native server bound to loopback',
      (docs: KubeObject[]) =>
        stackFile(docs, (config) => {
          ;(config.native as Record<string, unknown>).host = '127.0.0.1'
        }),
      /native\.host 127\.0\.0\.1/,
    ],
    [
      'a stack file the CLI refuses',
      (docs: KubeObject[]) =>
        stackFile(docs, (config) => {
          ;(config.gateway as Record<string, unknown>).port = 'eighty'
        }),
      /^the stack file:/,
    ],
    [
      'credentials mounted writable',
      (docs: KubeObject[]) => {
        const mount = gateway(docs).volumeMounts?.find((m) => m.mountPath === '/stack/state/credentials')
        if (mount) mount.readOnly = false
      },
      /\/stack\/state\/credentials \(a Secret or ConfigMap\) must be mounted readOnly/,
    ],
    [
      'a credential item whose key the Secret does not have',
      (docs: KubeObject[]) => {
        const item = gatewayPod(docs).volumes?.find((v) => v.name === 'credentials')?.projected?.sources?.[0]
          ?.secret?.items?.[0]
        if (item) item.key = 'keyy'
      },
      /has no key keyy/,
    ],
    [
      'a credential item outside the store layout',
      (docs: KubeObject[]) => {
        const item = gatewayPod(docs).volumes?.find((v) => v.name === 'credentials')?.projected?.sources?.[0]
          ?.secret?.items?.[0]
        if (item) item.path = 'owner.key'
      },
      /credentials item owner\.key is not <username>\/key/,
    ],
    [
      'a start secret the example Secret does not hold',
      (docs: KubeObject[]) => {
        const secret = the<ISecret>(docs, 'Secret', NAMES.startSecrets)
        delete (secret.stringData as Record<string, string>)['moderator-password']
      },
      /Secret sallyport-secrets has no key moderator-password/,
    ],
    [
      'secrets copied group-readable',
      (docs: KubeObject[]) => {
        const init = container(docs, 'Deployment', 'stack')
        init.args = (init.args ?? []).map((line) => line.replaceAll('install -m 0600', 'install -m 0640'))
      },
      /must copy each with `install -m 0600/,
    ],
    [
      'a pod without fsGroup',
      (docs: KubeObject[]) => {
        delete gatewayPod(docs).securityContext?.fsGroup
      },
      /sallyport-gateway: fsGroup must be/,
    ],
    [
      'a pod running as root',
      (docs: KubeObject[]) => {
        const context = runtimePod(docs).securityContext
        if (context) context.runAsUser = 0
      },
      /sallyport-runtime: runAsUser must be the image's uid/,
    ],
    [
      'a writable root file system',
      (docs: KubeObject[]) => {
        const context = gateway(docs).securityContext
        if (context) context.readOnlyRootFilesystem = false
      },
      /sallyport-gateway\/gateway: readOnlyRootFilesystem must be true/,
    ],
    [
      "a writable mount of the runtime's managed directory",
      (docs: KubeObject[]) => {
        const mount = container(docs, 'StatefulSet', 'runtime').volumeMounts?.find(
          (m) => m.mountPath === '/etc/opencode',
        )
        if (mount) delete mount.readOnly
      },
      /\/etc\/opencode must be read-only/,
    ],
    [
      'the secrets copied after init',
      (docs: KubeObject[]) => {
        runtimePod(docs).initContainers?.reverse()
      },
      /the secrets must be copied before `init`/,
    ],
    [
      'two runtimes',
      (docs: KubeObject[]) => {
        const spec = the<IStatefulSet>(docs, 'StatefulSet', NAMES.runtime).spec
        if (spec) spec.replicas = 2
      },
      /exactly one replica/,
    ],
    [
      'a network policy that lets every pod reach the runtime',
      (docs: KubeObject[]) => {
        const rule = the<INetworkPolicy>(docs, 'NetworkPolicy', NAMES.runtime).spec?.ingress?.[0]
        if (rule) delete rule.from
      },
      /a rule without "from" lets every pod in/,
    ],
    [
      'a Secret volume readable by others',
      (docs: KubeObject[]) => {
        const volume = gatewayPod(docs).volumes?.find((v) => v.secret)
        if (volume?.secret) volume.secret.defaultMode = 0o444
      },
      /defaultMode 444/,
    ],
    [
      'a Service that selects no pod',
      (docs: KubeObject[]) => {
        const service = the<KubeObject & { spec: { selector: Record<string, string> } }>(
          docs,
          'Service',
          NAMES.gateway,
        )
        service.spec.selector = { app: 'other' }
      },
      /Service sallyport-gateway: selects no gateway pod/,
    ],
  ])('finds a broken copy: %s', (_name, breakIt, expected) => {
    const docs = structuredClone(DOCS)
    breakIt(docs)
    expect(consistencyProblems(docs, IMAGE)).toContainEqual(expect.stringMatching(expected))
  })

  /** Runs the CLI in-process as the image's entrypoint would, with the stack directory moved to `dir`. */
  async function runCli(args: string[], dir: string): Promise<{ code: number; err: string }> {
    const moved = args.includes('--dir')
      ? args.map((arg, i) => (args[i - 1] === '--dir' ? dir : arg))
      : [...args, '--dir', dir]
    let err = ''
    const code = await main(moved, {
      out: () => {},
      err: (text) => {
        err += text
      },
      env: { ...IMAGE.env, SALLYPORT_DIR: dir, PATH: process.env.PATH },
    })
    return { code, err }
  }

  it('every container that runs the CLI gives it a command and flags the CLI accepts', async () => {
    const invocations = cliInvocations(DOCS)
    expect(invocations.map((invocation) => invocation.args[0]).sort()).toEqual(['init', 'serve', 'up'])
    const temp = await mkdtemp(join(tmpdir(), 'sallyport-k8s-'))
    onTestFinished(() => rm(temp, { recursive: true, force: true }))
    for (const { where, args } of invocations) {
      if (args[0] === 'init') {
        // `init` runs for real, in a temporary directory: a complete stack, as in the pod.
        const { code, err } = await runCli(args, join(temp, 'stack'))
        expect(code, `${where}: ${err}`).toBe(EXIT.ok)
      } else {
        // `up` and `serve` get as far as looking for the stack: past the argument parser.
        const { code, err } = await runCli(args, join(temp, 'none'))
        expect(code, `${where}: ${err}`).toBe(EXIT.stack)
        expect(err).toMatch(/no stack at/)
      }
    }
    // And the check can fail: a misspelt flag stops at the parser.
    const misspelt = await runCli(
      ['serve', '--native-ur', `http://${NAMES.runtime}:3810`],
      join(temp, 'none'),
    )
    expect(misspelt.code).toBe(EXIT.usage)
  })
})
