import { PresetError } from './errors.js'

// What a preset is made of, checked before anything is sent: an id the runtime uses as a provider
// id (and as the `provider/` part of a model), a display name, the server's base URL and a model
// id as the server names it.

const ID = /^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$/
/** Model ids as servers name them: `llama3.1:8b`, `Qwen/Qwen2.5-Coder-32B-Instruct`, `gpt-4o-mini`. */
const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/

/**
 * Names every JavaScript object already has (`constructor`, `toString`, `__proto__`, …): as a
 * model id in the runtime's configuration, one of them made the runtime unable to resolve any
 * model at all (found by a review). Refused as ids and as model ids.
 */
const OBJECT_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__', 'prototype'])
export const isObjectName = (name: string): boolean => OBJECT_NAMES.has(name)

/** A preset id: 1 to 64 lower-case letters, digits, `-` and `_`, starting and ending with a letter or digit. */
export function checkPresetId(id: string): string {
  if (!ID.test(id) || isObjectName(id))
    throw new PresetError(
      'ERR_PRESET_INVALID_ID',
      `invalid preset id ${JSON.stringify(id.slice(0, 80))}: use 1 to 64 lower-case letters, digits, "-" and "_" (it becomes the provider id, as in "<id>/<model>")`,
    )
  return id
}

/** A display name: 1 to 100 printable characters, no line breaks. */
export function checkPresetName(name: string): string {
  const trimmed = name.trim()
  if (trimmed.length === 0 || trimmed.length > 100 || /[\p{Cc}\p{Cf}\u2028\u2029]/u.test(trimmed))
    throw new PresetError(
      'ERR_PRESET_INVALID_NAME',
      'invalid preset name: use 1 to 100 printable characters on one line',
    )
  return trimmed
}

/** A model id as the server names it (its part after `<id>/` in the runtime). */
export function checkModelId(model: string): string {
  if (!MODEL.test(model) || model.includes('//') || isObjectName(model))
    throw new PresetError(
      'ERR_PRESET_INVALID_MODEL',
      `invalid model id ${JSON.stringify(model.slice(0, 80))}: use the id the server lists (letters, digits and . _ : / @ + -, up to 200 characters; not a name every JavaScript object has, such as constructor)`,
    )
  return model
}

/**
 * The base URL of an OpenAI-compatible server: `http` or `https`, a host, no user name or
 * password (the key goes to the credential store), no query or fragment. Returned without a
 * trailing slash. Servers commonly serve the API under `/v1`.
 */
export function checkBaseUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new PresetError('ERR_PRESET_INVALID_URL', 'invalid base URL: the value given is not a URL')
  }
  const problem =
    url.protocol !== 'http:' && url.protocol !== 'https:'
      ? 'use http:// or https://'
      : url.username !== '' || url.password !== ''
        ? 'a user name or password in the URL is not stored: pass the key on standard input'
        : url.search !== '' || url.hash !== ''
          ? 'a query or fragment is not part of a base URL'
          : undefined
  if (problem)
    throw new PresetError('ERR_PRESET_INVALID_URL', `invalid base URL ${describeUrl(text)}: ${problem}`)
  return url.href.replace(/\/+$/, '')
}

/**
 * Advice on a base URL that is valid but may not reach the server from where the runtime runs:
 * `localhost` is the runtime itself (in the container: not the host), and most servers want `/v1`.
 */
export function baseUrlAdvice(baseUrl: string, where: 'container' | 'host'): string[] {
  const url = new URL(baseUrl)
  const advice: string[] = []
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (host === 'localhost' || host === '::1' || /^127\./.test(host) || host === '0.0.0.0')
    advice.push(
      where === 'container'
        ? `${url.hostname} is the assistant runtime's own container, not the host: a server that listens on the host's loopback only is not reachable from a bridged container; use the host gateway address or an interface the server deliberately listens on`
        : `${url.hostname} is the machine the assistant runtime runs on`,
    )
  if (!/\/v\d+$/.test(url.pathname))
    advice.push('OpenAI-compatible servers usually serve the API under /v1 (for example http://host:8000/v1)')
  return advice
}

/**
 * A URL for messages: its origin and path only (never a user name, password or query); text that
 * is not a URL is not repeated at all (it may hold a secret).
 */
export function describeUrl(text: string): string {
  try {
    const url = new URL(text)
    return JSON.stringify(`${url.protocol}//${url.host}${url.pathname}`)
  } catch {
    return '(not a URL)'
  }
}
