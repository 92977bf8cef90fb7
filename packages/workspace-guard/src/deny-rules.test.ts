import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkPath } from './check-path.ts'

const FIXTURES = join(import.meta.dirname, '..', 'test', 'fixtures')
const PATTERNS_FILE = 'secret-filename-patterns.txt'

const denied = (path: string): boolean => !checkPath(path).ok

interface PatternLine {
  readonly kind: string
  readonly pattern: string
}

function patternLines(): PatternLine[] {
  return readFileSync(join(FIXTURES, PATTERNS_FILE), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const [kind = '', rest = ''] = line.split(/\s+(.*)/s)
      // Columns are separated by two or more spaces; the `dir` line lists its entries that way too.
      const pattern = kind === 'dir' ? rest.replace(/\s+A$/, '') : (rest.split(/\s{2,}/)[0] ?? '')
      // A few lines separate the source tag by one space only: `^.*_(rsa|…)$ G`.
      return { kind, pattern: pattern.replace(/ [GLSA](?:,[GLSA])*$/, '').trim() }
    })
}

// Examples for the regular-expression lines, which cannot be turned into names mechanically.
const REGEX_EXAMPLES: Record<string, readonly string[]> = {
  '^.*_(rsa|dsa|ecdsa|ed25519)$': [
    'id_rsa',
    'id_dsa',
    'id_ecdsa',
    'id_ed25519',
    'deploy_rsa',
    'x/ci_ed25519',
  ],
  '^\\.?env$': ['.env', 'env', 'config/.env', 'config/env'],
  '^\\.?npmrc$': ['.npmrc', 'npmrc'],
  '^(\\.|_)?netrc$': ['.netrc', '_netrc', 'netrc'],
  '^\\.?pgpass$': ['.pgpass', 'pgpass'],
  '^\\.?git-credentials$': ['.git-credentials', 'git-credentials'],
  '^\\.?gitconfig$': ['.gitconfig', 'gitconfig'],
  '^\\.?dockercfg$': ['.dockercfg', 'dockercfg'],
  '^\\.?s3cfg$': ['.s3cfg', 's3cfg'],
  '^\\.?htpasswd$': ['.htpasswd', 'htpasswd'],
  '^\\.?(bash_|zsh_|sh_|z)?history$': [
    '.bash_history',
    'bash_history',
    '.zsh_history',
    '.sh_history',
    '.zhistory',
    'history',
    '.history',
  ],
  '^\\.?(mysql|psql|irb)_history$': ['.mysql_history', 'psql_history', '.irb_history'],
  '^sftp-config(\\.json)?$': ['sftp-config', 'sftp-config.json'],
  '\\.?ssh/config$': ['.ssh/config', 'home/.ssh/config', '.ssh/authorized_keys'],
  '\\.?aws/credentials$': ['.aws/credentials', '.aws/config'],
  '\\.?gem/credentials$': ['.gem/credentials'],
  'doctl/config\\.yaml$': ['.config/doctl/config.yaml'],
  'config/hub$': ['.config/hub'],
  '\\.?chef/.*\\.pem$': ['.chef/admin.pem', '.chef/knife.rb'],
  'etc/(shadow|passwd)$': ['etc/shadow', 'etc/passwd', 'etc/gshadow'],
  'credential|password': ['my-credentials.txt', 'password-list.md', 'docs/passwords/a.txt'],
  '^(kubeconfig|.*\\.kubeconfig)$': ['kubeconfig', 'prod.kubeconfig', '.kube/config'],
}

// Names from the list that are deliberately NOT denied everywhere (see README, "Left out").
const LEFT_OUT: Record<string, string> = {
  '.sql': 'plain SQL migrations and schemas are source code; dumps are denied by name instead',
}

describe('deny rules from secret-filename-patterns.txt', () => {
  const lines = patternLines()

  it('has examples for every regular-expression line of the fixture', () => {
    const regexLines = lines.filter((line) => line.kind === 'name-re' || line.kind === 'path-re')
    expect(regexLines.length).toBeGreaterThan(10)
    for (const { pattern } of regexLines) expect(REGEX_EXAMPLES, pattern).toHaveProperty([pattern])
  })

  for (const { kind, pattern } of lines) {
    if (kind === 'ext') {
      for (const extension of pattern.split(' / ').map((e) => e.trim())) {
        if (extension in LEFT_OUT) {
          it(`leaves ${extension} readable (${LEFT_OUT[extension]})`, () => {
            expect(denied(`db/schema${extension}`)).toBe(false)
            expect(denied(`backups/db_dump${extension}`)).toBe(true)
          })
          continue
        }
        it(`denies *${extension} in any case and at any depth`, () => {
          expect(denied(`file${extension}`)).toBe(true)
          expect(denied(`a/b/FILE${extension.toUpperCase()}`)).toBe(true)
          expect(denied(`dir${extension}/inner.txt`)).toBe(true)
        })
      }
    } else if (kind === 'name' && pattern.startsWith('config.json under')) {
      it('denies .docker/config.json', () => expect(denied('.docker/config.json')).toBe(true))
    } else if (kind === 'name') {
      for (const name of pattern.split(' / ').map((n) => n.trim())) {
        it(`denies the name ${name} in any case and at any depth`, () => {
          expect(denied(name)).toBe(true)
          expect(denied(`sub/dir/${name.toUpperCase()}`)).toBe(true)
        })
      }
    } else if (kind === 'name-re' || kind === 'path-re') {
      it(`denies examples of ${kind} ${pattern}`, () => {
        for (const example of REGEX_EXAMPLES[pattern] ?? []) expect(denied(example), example).toBe(true)
      })
    } else if (kind === 'dir') {
      for (const directory of pattern.split(/\s+/).map((d) => d.replace(/\/$/, ''))) {
        it(`denies everything under ${directory}/`, () => {
          expect(denied(directory)).toBe(true)
          expect(denied(`${directory}/anything.txt`)).toBe(true)
          expect(denied(`nested/${directory.toUpperCase()}/x`)).toBe(true)
        })
      }
    }
  }
})

describe('deny rules: the policy beyond the fixture', () => {
  it.each([
    '.env.local',
    '.env.production',
    '.env-staging',
    '.ENV.LOCAL',
    'production.env',
    '.envrc',
    'app/.env.example.local',
    '.env.',
    '.env ',
    '.\uff45\uff4e\uff56', // fullwidth letters fold to `.env`
    'secrets/readme.md',
    'config/secret.yml',
    'client_secret.json',
    'Client-Secret.JSON',
    'my api-key.txt',
    'privateKey.txt',
    'terraform.auto.tfvars',
    'id_ed25519_sk',
    'service-account-prod.json',
    'serviceAccount.json',
    '.config/gh/hosts.yml',
    '.config/gcloud/credentials.db',
    '.m2/settings.xml',
    '.gradle/gradle.properties',
    'putty.ppk',
    'key.p8',
    'wp-config.php',
    '.my.cnf',
    '.hg/hgrc',
    '.svn/entries',
    'CVS/Root',
    '.jj/repo/store',
  ])('denies %s', (path) => {
    expect(denied(path)).toBe(true)
  })

  it.each([
    '.env.example',
    'config/.env.example',
    '.ENV.EXAMPLE',
    '.gitignore',
    '.gitattributes',
    '.github/workflows/ci.yml',
    'id_rsa.pub',
    'certs/server.crt',
    'certs/ca.cer',
    'src/env/index.ts',
    'src/history/list.ts',
    'src/env.ts',
    'environment.md',
    'monkey.ts',
    'tokenizer.ts',
    'keys.md',
    'db/migrations/001_init.sql',
    'docs/api.md',
    '.config/nvim/init.lua',
    'settings.json',
  ])('allows %s', (path) => {
    expect(denied(path)).toBe(false)
  })
})
