import { readFile } from 'node:fs/promises'
import { basicAuth } from '@sallyport/runtime-process'
import { isPortFree } from '../../stack/ports.ts'
import type { HealthTarget, StackPlan } from '../../stack/stack-plan.ts'
import { type Check, check } from './check.ts'

/**
 * One check per process of the plan (`gateway`, `assistant runtime`, `moderator runtime`): healthy
 * as this stack's process, answering as something else (401: another stack's password?), not
 * running (its port is free: a warning), or its port taken by another process.
 */
export async function processChecks(plan: Pick<StackPlan, 'healthTargets'>): Promise<Check[]> {
  const out: Check[] = []
  for (const target of plan.healthTargets) out.push(await processCheck(target))
  return out
}

async function processCheck(target: HealthTarget): Promise<Check> {
  const where = `${target.host}:${target.port}`
  const answer = await probe(target.url, await authorization(target))
  const body = answer?.body as Record<string, unknown> | undefined
  if (answer && answer.status === 200 && body?.[target.healthyField] === true) {
    const version = body.version
    return check(
      target.name,
      'ok',
      `healthy on ${where}${typeof version === 'string' ? ` (${version})` : ''}`,
    )
  }
  if (answer) {
    return check(
      target.name,
      'fail',
      `${where} answers HTTP ${answer.status}, not as this stack's ${target.name}${answer.status === 401 ? ' (wrong password: another stack?)' : ''}`,
      `stop the other server or change ${target.setting} in sallyport.json`,
    )
  }
  if (await isPortFree(target.host, target.port))
    return check(target.name, 'warn', `not running (${where} is free)`, 'start the stack with `sallyport up`')
  return check(
    target.name,
    'fail',
    `${where} is taken by another process`,
    `stop it or change ${target.setting} in sallyport.json`,
  )
}

/** The Basic header of a runtime target; none when its password file cannot be read. */
async function authorization(target: HealthTarget): Promise<string | undefined> {
  if (!target.basicAuth) return undefined
  const password = await readFile(target.basicAuth.passwordFile.path, 'utf8').then(
    (text) => text.trim(),
    () => undefined,
  )
  return password ? basicAuth(target.basicAuth.username, password) : undefined
}

async function probe(
  url: string,
  authorization?: string,
): Promise<{ status: number; body: unknown } | undefined> {
  try {
    const response = await fetch(url, {
      ...(authorization ? { headers: { authorization } } : {}),
      signal: AbortSignal.timeout(2000),
    })
    return { status: response.status, body: await response.json().catch(() => undefined) }
  } catch {
    return undefined
  }
}
