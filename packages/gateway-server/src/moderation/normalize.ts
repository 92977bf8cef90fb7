// Normalisation for the local screen: every view of the input the rules in screen-rules.ts read,
// built in one linear pass over the text, and counts of what the pass removed (the presence of
// invisible, bidirectional or control characters is itself a signal, so they are counted before
// they are dropped).
//
// Order matters: NFKC first (fullwidth, mathematical, circled and superscript letters become plain
// Latin), then the per-character pass (invisibles and controls dropped, confusables folded while
// the case still tells `Н` (looks like H) from `н`), then lower case, then accents stripped.

/** What the normalisation pass removed or folded; counts only, never the characters' positions. */
export interface RemovedCounts {
  /** Zero-width and other invisible format characters (not counting legitimate emoji and script joiners). */
  invisible: number
  /** Invisible characters sitting between two ASCII letters or digits: a word split to dodge a match. */
  invisibleInWord: number
  /** Bidirectional embedding, override and isolate controls (Trojan Source, CVE-2021-42574). */
  bidi: number
  /** Unicode tag characters (U+E0000–E007F) outside emoji flag sequences: "ASCII smuggling". */
  tags: number
  /** C0 and C1 control characters other than tab, line feed and carriage return. */
  control: number
  /** Look-alike characters folded to Latin (Cyrillic, Greek, Armenian, small capitals, …). */
  confusables: number
  /** Words mixing ASCII letters with folded look-alikes (UTS #39 mixed-script): `іgnоre`. */
  spoofedWords: number
}

/** The views a rule can read; see {@link normalizeForScreen}. */
export interface ScreenViews {
  /** NFKC, invisibles and controls removed, case kept (decoders read this: base64 is case-sensitive). */
  clean: string
  /** `clean` lower-cased, runs of spaces and of line breaks collapsed; no look-alike folding. */
  plain: string
  /** `plain` with look-alikes folded to Latin and accents stripped. */
  folded: string
  /** `folded` with leetspeak digits and symbols read as letters (`1gn0r3` → `ignore`). */
  leet: string
  /** `leet` with everything but letters removed (`i g n o r e`, `ig-nore` → `ignore`). */
  compact: string
}

/** A view's name. */
export type ScreenView = keyof ScreenViews

/** The normalised input: its views and what normalisation removed. */
export interface NormalizedText extends ScreenViews {
  removed: RemovedCounts
}

// Confusable look-alikes → Latin, case-aware (applied before lower-casing). A practical subset of
// Unicode's confusables.txt (UTS #39): the letters that render like Latin ones in common fonts.
const CONFUSABLE_PAIRS =
  // Cyrillic
  'АaВbЕeКkМmНhОoРpСcТtУyХxЅsІiЈjԀdҺhӀlԚqԜwҮyаaвbеeкkмmнhоoрpсcтtуyхxѕsіiјjԁdһhӏlԛqԝwүyёe' +
  // Greek
  'ΑaΒbΕeΖzΗhΙiΚkΜmΝnΟoΡpΤtΥyΧxαaιiκkνvοoρpυuχxγyϲcϳj' +
  // Armenian
  'օoսuհhոnցgԁd' +
  // Latin small capitals and other Latin look-alikes
  'ᴀaʙbᴄcᴅdᴇeɢgʜhɪiᴊjᴋkʟlᴍmɴnᴏoᴘpʀrꜱsᴛtᴜuᴠvᴡwʏyᴢzɡgıiȷjɩiɑaɒoꞮi'

const CONFUSABLES = new Map<number, string>()
for (let i = 0; i < CONFUSABLE_PAIRS.length; i += 2) {
  CONFUSABLES.set(CONFUSABLE_PAIRS.charCodeAt(i), CONFUSABLE_PAIRS[i + 1]!)
}

const LEET: Record<string, string> = {
  '0': 'o',
  '1': 'i',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '8': 'b',
  '9': 'g',
  '@': 'a',
  $: 's',
  '!': 'i',
}

const ASCII_ONLY = /^[\t\n\r\x20-\x7e]*$/
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u

type CharClass = 'keep' | 'invisible' | 'bidi' | 'mark' | 'tag' | 'control' | 'newline'

function classify(cp: number): CharClass {
  if (cp < 0x20) return cp === 0x09 || cp === 0x0a ? 'keep' : cp === 0x0d ? 'newline' : 'control'
  if (cp < 0x7f) return 'keep'
  if (cp <= 0x9f) return 'control'
  if (cp === 0xad || cp === 0x34f || cp === 0x115f || cp === 0x1160) return 'invisible'
  if (cp === 0x61c || cp === 0x200e || cp === 0x200f) return 'mark'
  if (cp >= 0x17b4 && cp <= 0x17b5) return 'invisible'
  if (cp >= 0x180b && cp <= 0x180f) return 'invisible'
  if (cp >= 0x200b && cp <= 0x200d) return 'invisible'
  if (cp === 0x2028 || cp === 0x2029) return 'newline'
  if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) return 'bidi'
  if ((cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x206a && cp <= 0x206f)) return 'invisible'
  if (cp === 0x3164 || cp === 0xfeff || cp === 0xffa0) return 'invisible'
  if ((cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xfff9 && cp <= 0xfffb)) return 'invisible'
  if ((cp >= 0x1bca0 && cp <= 0x1bca3) || (cp >= 0x1d173 && cp <= 0x1d17a)) return 'invisible'
  if (cp >= 0xe0000 && cp <= 0xe007f) return 'tag'
  if (cp >= 0xe0100 && cp <= 0xe01ef) return 'invisible'
  return 'keep'
}

const isAsciiAlnum = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
const isAsciiLetter = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
const LETTER_OR_MARK = /[\p{L}\p{M}]/u
const isLetterOrMark = (ch: string): boolean => LETTER_OR_MARK.test(ch)

/** Runs of horizontal whitespace → one space; runs of line breaks (and the spaces around them) → one `\n`. */
function collapse(s: string): string {
  return s.replace(/[^\S\n]+/g, ' ').replace(/ ?\n[\n ]*/g, '\n')
}

function views(clean: string, foldedSource: string | undefined, removed: RemovedCounts): NormalizedText {
  const plain = collapse(clean).toLowerCase()
  // ASCII text has nothing to fold (`foldedSource` undefined): `folded` is `plain`.
  const folded =
    foldedSource === undefined
      ? plain
      : collapse(foldedSource)
          .toLowerCase()
          .normalize('NFD')
          .replace(/\p{M}+/gu, '')
  const leet = folded.replace(/[013457890@$!]/g, (c) => LEET[c] ?? c)
  const compact = leet.replace(/[^\p{L}]+/gu, '')
  return { clean, plain, folded, leet, compact, removed }
}

/**
 * Builds the views the local screen reads and counts what normalisation removed. Linear in the
 * length of `text`; never throws. Fullwidth, mathematical and other compatibility forms become
 * plain letters (NFKC); zero-width, bidirectional, tag and control characters are dropped and
 * counted; look-alikes are folded to Latin in `folded`, `leet` and `compact`.
 *
 * @example normalizeForScreen('ＩＧＮ\u200bОRE').compact === 'ignore'
 */
export function normalizeForScreen(text: string): NormalizedText {
  const nfkc = text.normalize('NFKC')
  const removed: RemovedCounts = {
    invisible: 0,
    invisibleInWord: 0,
    bidi: 0,
    tags: 0,
    control: 0,
    confusables: 0,
    spoofedWords: 0,
  }
  if (ASCII_ONLY.test(nfkc)) {
    const clean = nfkc.includes('\r') ? nfkc.replace(/\r\n?/g, '\n') : nfkc
    return views(clean, undefined, removed)
  }

  let clean = ''
  let folded = ''
  // The last kept code point (invisibles skipped), an invisible waiting for its right-hand
  // neighbour, and the state of the current word for mixed-script detection.
  let prev = 0
  let pendingInWord = false
  let inFlag = false
  let wordAscii = false
  let wordSpoofed = false
  const endWord = (): void => {
    if (wordAscii && wordSpoofed) removed.spoofedWords++
    wordAscii = false
    wordSpoofed = false
  }
  for (let i = 0; i < nfkc.length; i++) {
    const cp = nfkc.codePointAt(i)!
    const ch = cp > 0xffff ? nfkc.slice(i, i + 2) : nfkc[i]!
    if (cp > 0xffff) i++
    const kind = classify(cp)
    if (kind === 'keep') {
      if (pendingInWord && isAsciiAlnum(cp)) removed.invisibleInWord++
      pendingInWord = false
      inFlag = cp === 0x1f3f4
      prev = cp
      const look = CONFUSABLES.get(cp)
      if (look !== undefined) {
        removed.confusables++
        wordSpoofed = true
      } else if (isAsciiLetter(cp)) wordAscii = true
      else if (!(cp >= 0x30 && cp <= 0x39) && !isLetterOrMark(ch)) endWord()
      clean += ch
      folded += look ?? ch
      continue
    }
    if (kind === 'newline') {
      endWord()
      if (cp !== 0x0d || nfkc[i + 1] !== '\n') {
        clean += '\n'
        folded += '\n'
      }
      continue
    }
    if (kind === 'mark') continue
    if (kind === 'bidi') removed.bidi++
    else if (kind === 'control') removed.control++
    else if (kind === 'tag') {
      // An emoji subdivision flag (🏴 + lower-case letter tags + CANCEL TAG) is legitimate.
      const flagTag = (cp >= 0xe0061 && cp <= 0xe007a) || (cp >= 0xe0030 && cp <= 0xe0039) || cp === 0xe007f
      if (!(inFlag && flagTag)) removed.tags++
      if (cp === 0xe007f) inFlag = false
    } else if (!isLegitimateJoiner(cp, prev, nfkc, i, text.length)) {
      removed.invisible++
      if (isAsciiAlnum(prev)) pendingInWord = true
    }
  }
  endWord()
  return views(clean, folded, removed)
}

// Joiners and variation selectors have real uses: ZWJ and VS16 inside emoji sequences, ZWNJ/ZWJ
// inside Indic and Persian words, a byte-order mark at the very start. Those are not counted.
function isLegitimateJoiner(cp: number, prev: number, s: string, i: number, length: number): boolean {
  if (cp === 0xfeff) return i === 0 && length > 0
  const prevChar = prev > 0 ? String.fromCodePoint(prev) : ''
  if (cp === 0xfe0f || cp === 0xfe0e) return prev > 0 && (PICTOGRAPHIC.test(prevChar) || prev < 0x40)
  if (cp === 0x200d || cp === 0x200c) {
    if (prev > 0x7f && PICTOGRAPHIC.test(prevChar)) return true
    // Between two non-ASCII letters (Devanagari, Arabic-script, …) a joiner is orthography.
    const next = s.codePointAt(i + 1) ?? 0
    return (
      prev > 0x7f && next > 0x7f && isLetterOrMark(prevChar) && isLetterOrMark(String.fromCodePoint(next))
    )
  }
  return false
}
