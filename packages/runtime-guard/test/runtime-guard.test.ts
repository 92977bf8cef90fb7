import { execFileSync } from 'node:child_process'
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRuntimeGuard,
  GUARDED_AGENTS,
  type RuntimeGuardHooks,
  runtimeAgentProfiles,
  secretReadPatterns,
  TOOL_RULES,
  ToolRefusedError,
} from '../src/index.ts'
import { patchTargets, rewritePatchTargets } from '../src/patch-paths.ts'

// Created when the file loads: the it.each tables below name paths in it.
const base = realpathSync(mkdtempSync(join(tmpdir(), 'runtime-guard-test-')))
const root = join(base, 'workspace')
const outside = join(base, 'state')
let hooks: RuntimeGuardHooks
const env: Record<string, string | undefined> = {}

const put = (path: string, text: string): void => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

beforeAll(async () => {
  put(join(root, 'src/index.ts'), 'export {}\n')
  put(join(root, '.env'), 'TOKEN=x\n')
  put(join(outside, 'credentials/owner/key'), 'owner\n')
  symlinkSync(join(outside, 'credentials/owner/key'), join(root, 'notes.txt'))
  symlinkSync(base, join(root, 'rootlink'))
  symlinkSync('src/index.ts', join(root, 'inside-link.ts'))
  linkSync(join(outside, 'credentials/owner/key'), join(root, 'hard.txt'))
  execFileSync('mkfifo', [join(root, 'pipe')])
  // Instruction files the runtime's read tool loads by itself from the directories above a file.
  put(join(root, 'docs/guide/intro.md'), '# intro\n')
  put(join(root, 'docs/AGENTS.md'), 'Be brief.\n')
  put(join(root, 's7/deep/c.txt'), 'ordinary\n')
  symlinkSync(join(outside, 'credentials/owner/key'), join(root, 's7/AGENTS.md'))
  put(join(root, 's8/deep/c.txt'), 'ordinary\n')
  linkSync(join(outside, 'credentials/owner/key'), join(root, 's8/deep/CONTEXT.md'))
  put(join(root, 's9/c.txt'), 'ordinary\n')
  execFileSync('mkfifo', [join(root, 's9/CLAUDE.md')])
  put(join(root, 's10/c.txt'), 'ordinary\n')
  symlinkSync('/dev/zero', join(root, 's10/AGENTS.md'))
  Object.assign(env, { OPENCODE_SERVER_PASSWORD: 'pw', PATH: '/usr/bin' })
  const lookup = async () => [{ address: '93.184.216.34', family: 4 }]
  hooks = await createRuntimeGuard({ env, lookup })({ directory: root })
})

afterAll(() => rmSync(base, { recursive: true, force: true }))

let sessionCount = 0
/** A session that ran `agent`, as the runtime reports it through chat.params. */
async function session(agent: string): Promise<string> {
  const id = `ses_test${sessionCount++}`
  await hooks['chat.params']({ sessionID: id, agent }, {})
  return id
}

async function call(sessionID: string, tool: string, args: Record<string, unknown>) {
  const output = { args: { ...args } }
  try {
    await hooks['tool.execute.before']({ tool, sessionID, callID: 'call_1' }, output)
    return { ok: true as const, args: output.args }
  } catch (error) {
    return { ok: false as const, message: (error as Error).message }
  }
}

/** The output of a `tool` call of a session that ran `agent`, after the plugin's after-hook. */
async function afterHook(
  agent: string,
  tool: string,
  args: Record<string, unknown>,
  text: string,
): Promise<string> {
  const id = await session(agent)
  const output = { output: text }
  await hooks['tool.execute.after']({ tool, sessionID: id, callID: 'c', args }, output)
  return output.output
}

describe('the plugin', () => {
  it('removes the runtime password from the environment when it loads', () => {
    expect(env.OPENCODE_SERVER_PASSWORD).toBeUndefined()
    expect(env.PATH).toBe('/usr/bin')
  })

  it('blanks the password in the shell environment should it reappear', async () => {
    env.OPENCODE_SERVER_PASSWORD = 'again'
    const output = { env: {} as Record<string, string> }
    await hooks['shell.env']({ cwd: root }, output)
    expect(output.env).toEqual({ OPENCODE_SERVER_PASSWORD: '' })
    delete env.OPENCODE_SERVER_PASSWORD
  })

  it.each(GUARDED_AGENTS)('guards the %s agent', async (agent) => {
    const id = await session(agent)
    expect(await call(id, 'read', { filePath: join(root, 'notes.txt') })).toMatchObject({ ok: false })
  })

  it('leaves a trusted agent alone', async () => {
    const id = await session('build')
    expect(await call(id, 'read', { filePath: join(root, 'notes.txt') })).toEqual({
      ok: true,
      args: { filePath: join(root, 'notes.txt') },
    })
    expect(await call(id, 'task', { subagent_type: 'general' })).toMatchObject({ ok: true })
  })

  it('guards a session it has never seen (fail closed)', async () => {
    expect(await call('ses_unknown', 'read', { filePath: join(root, 'notes.txt') })).toMatchObject({
      ok: false,
    })
  })

  it('keeps a session guarded when a hidden helper agent (title) runs for it later', async () => {
    const id = await session('remote-read')
    await hooks['chat.params']({ sessionID: id, agent: 'title' }, {})
    expect(await call(id, 'read', { filePath: join(root, 'notes.txt') })).toMatchObject({ ok: false })
  })

  it('forgets the oldest sessions beyond maxSessions, and then guards them', async () => {
    const small = await createRuntimeGuard({ env: {}, maxSessions: 2 })({ directory: root })
    for (const id of ['a', 'b', 'c']) await small['chat.params']({ sessionID: id, agent: 'build' }, {})
    const output = { args: { filePath: join(root, 'notes.txt') } as Record<string, unknown> }
    await expect(
      small['tool.execute.before']({ tool: 'read', sessionID: 'a', callID: 'x' }, output),
    ).rejects.toThrow(/refused/)
    await expect(
      small['tool.execute.before']({ tool: 'read', sessionID: 'c', callID: 'x' }, output),
    ).resolves.toBeUndefined()
  })

  it.each([
    ['remote', 'read'],
    ['remote', 'bash'],
    ['remote-read', 'bash'],
    ['remote-read', 'edit'],
    ['remote-read', 'webfetch'],
    ['scheduled', 'question'],
    ['scheduled', 'bash'],
  ])(
    'refuses a tool outside the %s profile (%s), whatever approvals the runtime holds',
    async (agent, tool) => {
      const id = await session(agent)
      expect(await call(id, tool, { command: 'ls', filePath: join(root, 'src/index.ts') })).toEqual({
        ok: false,
        message: `${tool}: refused by the workspace guard: this tool is not available to this credential`,
      })
    },
  )

  it.each([
    ['remote', 'question'],
    ['remote-read', 'read'],
    ['remote-read', 'question'],
    ['scheduled', 'read'],
    ['remote-full', 'bash'],
  ])('lets the %s profile use %s', async (agent, tool) => {
    const id = await session(agent)
    expect(await call(id, tool, { command: 'ls', filePath: join(root, 'src/index.ts') })).toMatchObject({
      ok: true,
    })
  })

  it('an unknown session gets only what every guarded profile may use: nothing (scheduled cannot ask, chat cannot read)', async () => {
    for (const tool of ['question', 'read', 'bash'])
      expect(
        await call('ses_never_seen', tool, { command: 'id', filePath: join(root, 'src/index.ts') }),
      ).toMatchObject({ ok: false })
  })

  it('rejects invalid options when it is created', () => {
    expect(() => createRuntimeGuard({ maxReadBytes: 0 })).toThrow(TypeError)
    expect(() => createRuntimeGuard({ maxSessions: 1.5 })).toThrow(TypeError)
  })
})

describe('tool rules for a guarded agent', () => {
  let id: string
  beforeAll(async () => {
    id = await session('remote-full')
  })

  it('hands the tool the canonical target it approved', async () => {
    expect(await call(id, 'read', { filePath: 'inside-link.ts' })).toEqual({
      ok: true,
      args: { filePath: join(root, 'src/index.ts') },
    })
    expect(await call(id, 'write', { filePath: join(root, 'src/new.ts'), content: 'x' })).toEqual({
      ok: true,
      args: { filePath: join(root, 'src/new.ts'), content: 'x' },
    })
  })

  it('reads a file below an ordinary instruction file', async () => {
    expect(await call(id, 'read', { filePath: 'docs/guide/intro.md' })).toMatchObject({ ok: true })
  })

  it.each([
    ['a link to the owner key', 's7/deep/c.txt'],
    ['a hard link', 's8/deep/c.txt'],
    ['a FIFO', 's9/c.txt'],
    ['a link to /dev/zero', 's10/c.txt'],
  ])('refuses a read that would load an instruction file that is %s', async (_name, path) => {
    expect(await call(id, 'read', { filePath: path })).toEqual({
      ok: false,
      message:
        'read: refused by the workspace guard: an instruction file the runtime would load with it is not readable',
    })
    // Writing the same file is no read: the runtime loads nothing with it.
    expect(await call(id, 'write', { filePath: path, content: 'x' })).toMatchObject({ ok: true })
  })

  it('fills in an omitted directory of glob with the workspace root', async () => {
    expect(await call(id, 'glob', { pattern: '**/*.ts' })).toEqual({
      ok: true,
      args: { pattern: '**/*.ts', path: root },
    })
  })

  it.each([
    ['read', { filePath: join(root, 'notes.txt') }],
    ['read', { filePath: 'rootlink/state/credentials/owner/key' }],
    ['read', { filePath: join(root, 'hard.txt') }],
    ['read', { filePath: join(root, 'pipe') }],
    ['read', { filePath: join(root, '.ENV') }],
    ['read', { filePath: '/etc/passwd' }],
    ['read', { filePath: `${root}/../state/credentials/owner/key` }],
    ['read', { filePath: `${root}\u0000/x` }],
    ['read', {}],
    ['lsp', { filePath: join(root, 'notes.txt'), operation: 'hover' }],
    ['glob', { pattern: '*', path: join(root, 'rootlink') }],
    ['glob', { pattern: '../*' }],
    ['glob', { pattern: '/etc/*' }],
    ['edit', { filePath: join(root, '.env'), oldString: 'x', newString: 'y' }],
    ['write', { filePath: join(root, 'rootlink/planted.sh'), content: 'x' }],
    ['write', { filePath: join(root, '.git/hooks/pre-commit'), content: 'x' }],
    ['apply_patch', { patchText: '*** Begin Patch\n*** Add File: rootlink/x.sh\n+x\n*** End Patch' }],
    [
      'apply_patch',
      { patchText: '*** Begin Patch\n*** Update File: src/index.ts\n*** Move to: ../x.ts\n*** End Patch' },
    ],
    ['apply_patch', { patchText: 42 }],
    ['webfetch', { url: 'http://127.0.0.1:3810/session' }],
    ['webfetch', { url: 'http://169.254.169.254/' }],
    ['task', { subagent_type: 'general', prompt: 'x', description: 'x' }],
    ['grep', { pattern: 'TOKEN', path: root }],
    ['websearch', { query: 'x' }],
    ['codesearch', { query: 'x' }],
    ['some_mcp_tool', { anything: true }],
    ['__proto__', {}],
  ])('refuses %s %j', async (tool, args) => {
    const out = await call(id, tool, args)
    expect(out.ok).toBe(false)
    expect(out.ok ? '' : out.message).toMatch(
      new RegExp(`^${tool.replace(/_/gu, '_')}: refused by the workspace guard: `),
    )
    expect(out.ok ? '' : out.message).not.toContain(base)
  })

  it.each(['bash', 'question', 'todowrite', 'skill', 'invalid'])(
    'lets %s through to its permission rule',
    async (tool) => {
      expect(await call(id, tool, { command: 'ls' })).toMatchObject({ ok: true })
    },
  )

  it('rewrites every file of an approved patch to its canonical target', async () => {
    const patch =
      '*** Begin Patch\n*** Update File: inside-link.ts\n@@\n-a\n+b\n*** Add File: src/b.ts\n+x\n*** End Patch'
    const out = await call(id, 'apply_patch', { patchText: patch })
    expect(out).toEqual({
      ok: true,
      args: {
        patchText: `*** Begin Patch\n*** Update File: ${join(root, 'src/index.ts')}\n@@\n-a\n+b\n*** Add File: ${join(root, 'src/b.ts')}\n+x\n*** End Patch`,
      },
    })
  })

  it('a public fetch is left to the permission ask, with the timeout written in', async () => {
    expect(await call(id, 'webfetch', { url: 'https://example.com/' })).toEqual({
      ok: true,
      args: { url: 'https://example.com/', timeout: 30 },
    })
    expect(await call(id, 'webfetch', { url: 'https://example.com/', timeout: 5 })).toMatchObject({
      args: { timeout: 5 },
    })
  })

  it('knows every tool the pinned runtime registers', () => {
    for (const tool of [
      'read',
      'glob',
      'grep',
      'edit',
      'write',
      'apply_patch',
      'bash',
      'webfetch',
      'task',
      'todowrite',
      'websearch',
      'skill',
      'question',
      'invalid',
      'lsp',
    ])
      expect(Object.hasOwn(TOOL_RULES, tool)).toBe(true)
  })
})

describe('patch headers', () => {
  it('lists every file a patch names, once', () => {
    expect(
      patchTargets(
        '*** Begin Patch\r\n*** Add File: a.ts\r\n*** Update File:  b.ts \n*** Move to: c.ts\n*** Delete File: a.ts\n*** End Patch',
      ),
    ).toEqual(['a.ts', 'b.ts', 'c.ts'])
  })

  it.each([
    ['a line separator', '*** Add File: ../outside.txt\u2028'],
    ['a carriage return pair', '*** Add File: ../outside.txt\r\r'],
    ['a vertical tab', '*** Add File: .git/hooks/x\v'],
    ['a no-break space', '*** Add File: .env\u00a0'],
    ['leading spaces', '   *** Update File: ../outside.txt'],
  ])('reads a header ending in %s as the runtime does (trimmed)', (_name, line) => {
    const path = line
      .trim()
      .replace(/^\*\*\* [A-Za-z ]+:/u, '')
      .trim()
    expect(patchTargets(`*** Begin Patch\n${line}\n*** End Patch`)).toEqual([path])
  })

  it('refuses to rewrite a target that was not checked', () => {
    expect(() => rewritePatchTargets('*** Add File: a.ts', new Map())).toThrow()
  })
})

describe('profiles as the runtime gets them', () => {
  it('read rules derive from the guard: secret names denied in lower and upper case, the example env allowed', () => {
    const rules = secretReadPatterns()
    expect(Object.keys(rules)[0]).toBe('*')
    for (const pattern of [
      '*/.env',
      '*/.ENV',
      '*.pem',
      '*.PEM',
      '*/.git/*',
      '*/kubeconfig',
      '*.tfstate',
      '*secret*',
      '*_rsa',
    ])
      expect([pattern, rules[pattern]]).toEqual([pattern, 'deny'])
    expect(Object.keys(rules).at(-1)).toBe('*/.env.example')
    expect(rules['*/.env.example']).toBe('allow')
  })

  it('the profiles that read use those rules; the chat profile still reads nothing', () => {
    const profiles = runtimeAgentProfiles()
    expect(Object.keys(profiles).sort()).toEqual(['remote', 'remote-full', 'remote-read', 'scheduled'])
    for (const name of ['remote-read', 'remote-full', 'scheduled'])
      expect(profiles[name]?.permission.read).toEqual(secretReadPatterns())
    expect(profiles.remote?.permission).toEqual({ '*': 'deny', question: 'allow' })
    expect(profiles.scheduled?.permission).toMatchObject({ '*': 'deny', question: 'deny' })
  })
})

describe('listings name no refused entry', () => {
  it('glob output loses the paths the guard refuses, and nothing else', async () => {
    const glob = [
      join(root, 'src/index.ts'),
      join(root, '.env'),
      join(root, '.git/config'),
      join(outside, 'x'),
    ]
    const filtered = await afterHook(
      'remote-full',
      'glob',
      { path: root },
      [...glob, 'No more files'].join('\n'),
    )
    expect(filtered).toBe([join(root, 'src/index.ts'), 'No more files'].join('\n'))
  })

  it("a directory read loses the refused entries' names", async () => {
    const listing = [
      '<entries>',
      '.env',
      'hard.txt',
      'inside-link.ts',
      'notes.txt',
      'src/',
      '',
      '(5 entries)',
      '</entries>',
    ].join('\n')
    const filtered = await afterHook('remote-read', 'read', { filePath: root }, listing)
    expect(filtered).toBe(
      // The count the runtime prints must not betray what was left out.
      ['<entries>', 'hard.txt', 'inside-link.ts', 'notes.txt', 'src/', '', '(4 entries)', '</entries>'].join(
        '\n',
      ),
    )
  })

  it('a paged directory read states the counts of what it shows, not of what it hides', async () => {
    const footer = "(Showing 2 of 9 entries. Use 'offset' parameter to read beyond entry 3)"
    const listing = ['<entries>', '.env', 'hard.txt', '', footer, '</entries>'].join('\n')
    const filtered = await afterHook('remote-read', 'read', { filePath: root }, listing)
    const hidden = ['.env'].length // the root's only refused entry
    expect(filtered).toBe(
      [
        '<entries>',
        'hard.txt',
        '',
        `(Showing 1 of ${9 - hidden} entries. Use 'offset' to read more.)`,
        '</entries>',
      ].join('\n'),
    )
  })

  it('a read loses the instruction files the runtime appended (they could have been swapped in)', async () => {
    const text =
      '<path>x</path>\n<type>file</type>\n<content>\n1: hello\n(End of file - total 1 lines)\n</content>'
    const loaded = `${text}\n<system-reminder>\nInstructions from: a/AGENTS.md\nSECRET\n</system-reminder>`
    expect(await afterHook('remote-read', 'read', { filePath: join(root, 'src/index.ts') }, loaded)).toBe(
      text,
    )
  })

  it('a trusted session keeps its listing', async () => {
    expect(await afterHook('build', 'glob', {}, join(root, '.env'))).toBe(join(root, '.env'))
  })
})

describe('ToolRefusedError', () => {
  it('is what a refused call throws, recognised by isInstance also from another copy of the package', async () => {
    const id = await session('remote')
    const thrown = await hooks['tool.execute.before'](
      { tool: 'bash', sessionID: id, callID: 'c' },
      { args: {} },
    ).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(ToolRefusedError.isInstance(thrown)).toBe(true)
    // Another copy of the package: another class, the same registered symbol.
    const foreign = Object.assign(new Error('x'), {
      [Symbol.for('sallyport.runtime-guard.ToolRefusedError')]: true,
    })
    expect(ToolRefusedError.isInstance(foreign)).toBe(true)
    expect(ToolRefusedError.isInstance(Object.assign(new Error('x'), { name: 'ToolRefusedError' }))).toBe(
      false,
    )
    expect(ToolRefusedError.isInstance(undefined)).toBe(false)
  })
})
