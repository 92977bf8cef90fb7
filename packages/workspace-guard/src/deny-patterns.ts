// The deny-list, as data. Every entry is compared with the *matching key* of a path component
// (NFKC, lower case, trailing dots and spaces removed: see `componentKey` in check-path.ts), on
// every component.
// Sources: test/fixtures/secret-filename-patterns.txt, vendored from the project's security fixtures (gitrob [G], gitleaks [L],
// additions [A]); entries marked "+" are this package's additions. README.md lists what was left out.

/** Version-control metadata directories (their objects hold every past secret of the repository). */
export const VCS_DIRECTORIES: readonly string[] = [
  '.git',
  '.hg',
  '.svn',
  '.bzr',
  '_darcs',
  'cvs',
  '.fslckout',
  '_fossil_',
  '.pijul',
  '.jj',
  '.sl',
]

/** Credential stores of CLIs and agents, denied as whole directories. */
export const CREDENTIAL_DIRECTORIES: readonly string[] = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.docker',
  '.kube',
  '.azure',
  '.terraform.d',
  '.chef', // [G] .chef/*.pem and knife.rb: the whole directory is key material
  '.oci', // + Oracle Cloud CLI config points at API signing keys
  '.pki', // + NSS certificate/key databases
  'keyrings', // + ~/.local/share/keyrings (GNOME Keyring)
]

/** Two consecutive components: `parent/child` denied wherever it appears (child may be a directory). */
export const DENIED_PAIRS: readonly (readonly [string, string])[] = [
  ['.config', 'gh'],
  ['.config', 'gcloud'],
  ['.config', 'hub'],
  ['.config', 'doctl'],
  ['.config', 'op'], // + 1Password CLI
  ['.config', 'rclone'], // + rclone.conf holds OAuth tokens
  ['.config', 'sops'], // + age keys
  ['etc', 'shadow'],
  ['etc', 'gshadow'],
  ['.m2', 'settings.xml'], // + Maven server passwords
  ['.m2', 'settings-security.xml'],
  ['.gradle', 'gradle.properties'], // + ~/.gradle/gradle.properties holds publishing tokens
]

/** Exact component names (files or directories). */
export const DENIED_NAMES: readonly string[] = [
  '.env',
  '.envrc', // + direnv
  '.npmrc',
  'npmrc',
  '.yarnrc', // + may hold _authToken
  '.yarnrc.yml', // + may hold npmAuthToken
  '.netrc',
  'netrc',
  '_netrc',
  '.pgpass',
  'pgpass',
  '.gitconfig',
  'gitconfig',
  '.dockercfg',
  'dockercfg',
  '.s3cfg',
  's3cfg',
  '.htpasswd',
  'htpasswd',
  '.history',
  '.bash_history',
  'bash_history',
  '.zsh_history',
  'zsh_history',
  '.sh_history',
  'sh_history',
  '.zhistory',
  'zhistory',
  '.mysql_history',
  'mysql_history',
  '.psql_history',
  'psql_history',
  '.irb_history',
  'irb_history',
  '.python_history', // +
  '.node_repl_history', // +
  '.sqlite_history', // +
  '.rediscli_history', // +
  'sftp-config',
  'sftp-config.json',
  'terraform.tfvars',
  'otr.private_key',
  'omniauth.rb',
  'carrierwave.rb',
  'database.yml',
  'settings.py',
  'localsettings.php',
  'filezilla.xml',
  'recentservers.xml',
  'robomongo.json',
  'knife.rb',
  'auth.json',
  'kubeconfig',
  '.pypirc',
  'pypirc',
  '.vault-token',
  '.terraformrc',
  'terraformrc',
  '.boto', // + Google Cloud Storage / boto credentials
  '.my.cnf', // + MySQL client password
  'wp-config.php', // + WordPress database password and salts
  'logins.json', // + Firefox saved logins
  'key3.db', // + Firefox key database
  'key4.db',
]

/**
 * Names denied only as the last component: as directory names they are common and harmless
 * (`src/env/`, a `history/` module), as file names they hold environment secrets or shell history.
 */
export const DENIED_FILE_NAMES: readonly string[] = ['env', 'history']

/** Suffixes ("extensions", may span dots) denied on any component. */
export const DENIED_SUFFIXES: readonly string[] = [
  '.pem',
  '.key',
  '.keypair',
  '.p12',
  '.pfx',
  '.pkcs12',
  '.p8', // + PKCS#8 private keys
  '.ppk', // + PuTTY private keys
  '.asc',
  '.jks',
  '.keystore',
  '.keyring',
  '.kdb',
  '.kdbx',
  '.psafe3',
  '.agilekeychain',
  '.keychain',
  '.kwallet',
  '.ovpn',
  '.tblk',
  '.rdp',
  '.bek',
  '.tpm',
  '.fve',
  '.sqlite',
  '.sqlite3',
  '.sdf',
  '.mdf',
  '.sqldump',
  '.pcap',
  '.pcapng', // +
  '.tfstate',
  '.tfstate.backup',
  '.tfvars', // + terraform.tfvars and *.auto.tfvars alike
  '.tfvars.json', // +
  '.kubeconfig',
  '.env', // + `production.env`, `docker.env`
]

/**
 * Substrings denied anywhere in a component, compared on the key with `-`, `_`, `.` and spaces
 * removed (so `client_secret.json`, `api-key.txt`, `Private Key.txt` all match). Broad on purpose:
 * the spec denies "paths with secret-like components" and a false positive only costs a read.
 */
export const DENIED_SUBSTRINGS: readonly string[] = [
  'secret',
  'credential',
  'password',
  'passwd',
  'passphrase',
  'privatekey',
  'apikey',
  'accesskey',
  'authtoken',
]

/** Regular expressions over the whole key of one component. */
export const DENIED_NAME_PATTERNS: readonly RegExp[] = [
  /^.+_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?$/, // id_rsa, deploy_ed25519, id_ecdsa_sk
  /^\.env[._-].+$/, // .env.local, .env.production, .env-staging (.env.example is allowed below)
  /^service[-_]?account.*\.json$/, // GCP service account keys
  /(?:dump|backup).*\.sql$/, // database dumps (plain .sql migrations stay readable)
]

/** Keys that would match a rule above but are explicitly allowed. */
export const ALLOWED_NAMES: readonly string[] = ['.env.example']

/** Every list above in one frozen object (exported by the package as `DENY_LIST`). */
export const DENY_LIST = Object.freeze({
  vcsDirectories: VCS_DIRECTORIES,
  credentialDirectories: CREDENTIAL_DIRECTORIES,
  deniedPairs: DENIED_PAIRS,
  deniedNames: DENIED_NAMES,
  deniedFileNames: DENIED_FILE_NAMES,
  deniedSuffixes: DENIED_SUFFIXES,
  deniedSubstrings: DENIED_SUBSTRINGS,
  allowedNames: ALLOWED_NAMES,
})
