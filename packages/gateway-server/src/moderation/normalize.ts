// Normalisation for the local screen: every view of the input the rules in screen-rules.ts read,
// built in one linear pass over the text, and counts of what the pass removed (the presence of
// invisible, bidirectional or control characters is itself a signal, so they are counted before
// they are dropped).
//
// Order matters: NFKC first (fullwidth, mathematical, circled and superscript letters become plain
// Latin), then the per-character pass (invisibles and controls dropped, confusables folded while
// the case still tells `Н` (looks like H) from `н`), then lower case, then accents stripped.

import { Buffer } from 'node:buffer'

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
  /** Words mixing ASCII letters with folded look-alikes (UTS #39 mixed-script): `іgnоre`; Turkish `ı` excepted. */
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
  /** The code units of some views, where normalisation made them anyway (bytes for ASCII text). */
  units?: Partial<Record<ScreenView, Uint8Array | Uint16Array>>
}

/**
 * The code units of a view, for the passes that read every character (reading a typed array is
 * several times faster than `charCodeAt`): the bytes normalisation kept, or the view copied out
 * natively as UTF-16.
 */
export function unitsOf(n: NormalizedText, view: ScreenView): Uint8Array | Uint16Array {
  const kept = n.units?.[view]
  if (kept !== undefined) return kept
  return toUnits(n[view])
}

/** The UTF-16 code units of `text`. */
export function toUnits(text: string): Uint16Array {
  if (!LITTLE_ENDIAN) {
    const units = new Uint16Array(text.length)
    for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i)
    return units
  }
  const bytes = Buffer.from(text, 'utf16le')
  return new Uint16Array(bytes.buffer, bytes.byteOffset, text.length)
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

export const LEET: Readonly<Record<string, string>> = {
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

// LEET as a code-unit table, applied in one pass (a replace callback per digit is slow on long input).
const LEET_UNITS = new Uint16Array(128)
for (const [from, to] of Object.entries(LEET)) LEET_UNITS[from.charCodeAt(0)] = to.charCodeAt(0)

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

// classify() as numbers, and for every BMP code point once (a table lookup per character).
const KEEP = 0
const INVISIBLE = 1
const BIDI = 2
const MARK = 3
const TAG = 4
const CONTROL = 5
const NEWLINE = 6
const KIND_CODE: Record<CharClass, number> = {
  keep: KEEP,
  invisible: INVISIBLE,
  bidi: BIDI,
  mark: MARK,
  tag: TAG,
  control: CONTROL,
  newline: NEWLINE,
}
const KIND_BMP = new Uint8Array(0x10000)
for (let cp = 0; cp <= 0xffff; cp++) KIND_BMP[cp] = KIND_CODE[classify(cp)]
// CONFUSABLES as a table (all of them are in the BMP): 0 where a code point has no look-alike.
const CONFUSABLE_UNIT = new Uint16Array(0x10000)
for (const [cp, latin] of CONFUSABLES) CONFUSABLE_UNIT[cp] = latin.charCodeAt(0)

const isAsciiAlnum = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
const isAsciiLetter = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
const LETTER_OR_MARK = /[\p{L}\p{M}]/u
const isLetterOrMark = (ch: string): boolean => LETTER_OR_MARK.test(ch)
// isLetterOrMark by code point, cached for the BMP (0 unknown, 1 yes, 2 no): one regex test per
// distinct character instead of one per character.
const LETTER_OR_MARK_BMP = new Uint8Array(0x10000)
function isLetterOrMarkCp(cp: number): boolean {
  if (cp < 0x80) return isAsciiLetter(cp)
  if (cp > 0xffff) return isLetterOrMark(String.fromCodePoint(cp))
  let known = LETTER_OR_MARK_BMP[cp]!
  if (known === 0) {
    known = isLetterOrMark(String.fromCharCode(cp)) ? 1 : 2
    LETTER_OR_MARK_BMP[cp] = known
  }
  return known === 1
}

/** Runs of horizontal whitespace → one space; runs of line breaks (and the spaces around them) → one `\n`. */
function collapse(s: string): string {
  // Only runs that are not already a single space are replaced (most spaces are single).
  return s.replace(/(?: [^\S\n]|[^\S\n ])[^\S\n]*/g, ' ').replace(/ ?\n[\n ]*/g, '\n')
}

// The category of each BMP code unit, filled as met (0 unknown, else one of the three): one
// regular expression test per distinct character instead of a Unicode-aware split per view.
const LETTER_UNIT = 1
const MARK_UNIT = 2
const OTHER_UNIT = 3
const UNIT_CATEGORY = new Uint8Array(0x10000)
const IS_LETTER = /^\p{L}$/u
const IS_MARK = /^\p{M}$/u
function categoryOf(cp: number): number {
  const ch = String.fromCodePoint(cp)
  return IS_LETTER.test(ch) ? LETTER_UNIT : IS_MARK.test(ch) ? MARK_UNIT : OTHER_UNIT
}
function unitCategory(unit: number): number {
  let known = UNIT_CATEGORY[unit] as number
  if (known === 0) {
    // A lone surrogate is neither a letter nor a mark.
    known = unit >= 0xd800 && unit <= 0xdfff ? OTHER_UNIT : categoryOf(unit)
    UNIT_CATEGORY[unit] = known
  }
  return known
}

/**
 * The views of text that is not plain ASCII. `plain` is `clean` with blanks collapsed, lower
 * case; `folded` is `foldedSource` (look-alikes folded) the same way, decomposed (NFD) and
 * without its combining marks; `leet` reads leetspeak in it and `compact` keeps its letters. The
 * last three come from one pass over `folded`'s code units (a Unicode-aware split per view costs
 * several times more), which also hands their units over to the screen's passes.
 */
function views(clean: string, foldedSource: string, removed: RemovedCounts): NormalizedText {
  const plain = collapse(clean).toLowerCase()
  const decomposed = collapse(foldedSource).toLowerCase().normalize('NFD')
  const source = toUnits(decomposed)
  const n = source.length
  const folded = new Uint16Array(n)
  const leet = new Uint16Array(n)
  const compact = new Uint16Array(n)
  let f = 0
  let c = 0
  let leetDiffers = false
  // The last unit written is a high surrogate without its low half.
  let loneHigh = false
  for (let i = 0; i < n; i++) {
    const unit = source[i] as number
    const low = i + 1 < n ? (source[i + 1] as number) : 0
    if (unit >= 0xd800 && unit <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
      // A surrogate pair: one code point beyond the BMP (not cached; rare).
      const category = categoryOf(((unit - 0xd800) << 10) + (low - 0xdc00) + 0x10000)
      i++
      if (category === MARK_UNIT) continue
      loneHigh = false
      folded[f] = leet[f] = unit
      folded[f + 1] = leet[f + 1] = low
      f += 2
      if (category === LETTER_UNIT) {
        compact[c++] = unit
        compact[c++] = low
      }
      continue
    }
    const category = unitCategory(unit)
    if (category === MARK_UNIT) continue
    // A lone low surrogate right after a lone high one (a mark between them was removed) makes a
    // code point of the two in the views: `compact` keeps it when it is a letter.
    if (unit >= 0xdc00 && unit <= 0xdfff && loneHigh && f > 0) {
      const high = folded[f - 1] as number
      if (categoryOf(((high - 0xd800) << 10) + (unit - 0xdc00) + 0x10000) === LETTER_UNIT) {
        compact[c++] = high
        compact[c++] = unit
      }
      folded[f] = leet[f] = unit
      f++
      loneHigh = false
      continue
    }
    loneHigh = unit >= 0xd800 && unit <= 0xdbff
    folded[f] = unit
    // Leetspeak digits and symbols read as letters (which `compact` keeps).
    const read = unit < 128 ? (LEET_UNITS[unit] as number) || unit : unit
    if (read !== unit) leetDiffers = true
    leet[f++] = read
    if (read !== unit || category === LETTER_UNIT) compact[c++] = read
  }
  const foldedText = fromCodeUnits(folded, f)
  const foldedUnits = folded.subarray(0, f)
  return {
    clean,
    plain,
    folded: foldedText,
    leet: leetDiffers ? fromCodeUnits(leet, f) : foldedText,
    compact: fromCodeUnits(compact, c),
    removed,
    units: {
      folded: foldedUnits,
      leet: leetDiffers ? leet.subarray(0, f) : foldedUnits,
      compact: compact.subarray(0, c),
    },
  }
}

/**
 * Memory reused from one screening to the next (the screen is synchronous), as the views of
 * every input would otherwise be new memory outside the heap: allocated at thousands of inputs
 * a second, it makes the collector run far more often.
 */
export class Scratch {
  private buffer = Buffer.alloc(0)
  /** A buffer of at least `size` bytes; its contents are left over from the last use. */
  bytes(size: number): Buffer {
    if (this.buffer.length < size) this.buffer = Buffer.alloc(Math.max(size, 2 * this.buffer.length))
    return this.buffer
  }
}

const latin1 = (bytes: Uint8Array, length: number): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, length).toString('latin1')

/**
 * The views of ASCII text (tab, line feed, carriage return and printable ASCII only) in one pass:
 * what `views()` computes with a few regular expressions and string copies, without them (on a
 * 4 KiB message the copies cost more than every rule together). ASCII has no look-alikes and no
 * accents, so `folded` is `plain`. `undefined` when the text holds a control character other than
 * tab, line feed and carriage return (the general pass counts those). The text is copied into bytes natively first (reading a typed
 * array is several times faster than `charCodeAt`), and every view is a flat string (reading a
 * sliced or concatenated string is about twice as slow, and the rules read each view often).
 */
function asciiViews(text: string, removed: RemovedCounts, scratch?: Scratch): NormalizedText | undefined {
  const n = text.length
  // The four views' bytes in one buffer (kept in `units`), and a plain typed array over the
  // text's bytes, as indexing a Buffer (a subclass) is slower.
  const memory = scratch === undefined ? Buffer.alloc(4 * n) : scratch.bytes(4 * n)
  memory.write(text, 0, n, 'latin1')
  const clean = new Uint8Array(memory.buffer, memory.byteOffset, n)
  const plain = new Uint8Array(memory.buffer, memory.byteOffset + n, n)
  const leet = new Uint8Array(memory.buffer, memory.byteOffset + 2 * n, n)
  const compact = new Uint8Array(memory.buffer, memory.byteOffset + 3 * n, n)
  let cleanLength = 0
  let plainLength = 0
  let compactLength = 0
  let leetDiffers = false
  // Blanks are written when the next character that is not one arrives: a run of spaces and tabs
  // as one space, a run of line breaks (with the blanks around them) as one line break.
  let pendingSpace = false
  let pendingNewline = false
  for (let i = 0; i < n; i++) {
    let c = clean[i] as number
    if (c === 0x0d) {
      // CR LF and a lone CR are one line break (`clean` is rewritten in place, never ahead of `i`).
      if (i + 1 < n && clean[i + 1] === 0x0a) i++
      c = 0x0a
    }
    clean[cleanLength++] = c
    if (c === 0x0a) {
      pendingNewline = true
      pendingSpace = false
      continue
    }
    if (c === 0x20 || c === 0x09) {
      if (!pendingNewline) pendingSpace = true
      continue
    }
    if (c < 0x20 || c === 0x7f) return undefined
    if (pendingNewline || pendingSpace) {
      const blank = pendingNewline ? 0x0a : 0x20
      plain[plainLength] = blank
      leet[plainLength++] = blank
      pendingNewline = pendingSpace = false
    }
    if (c >= 0x41 && c <= 0x5a) c += 0x20
    plain[plainLength] = c
    const l = LEET_UNITS[c] || c
    if (l !== c) leetDiffers = true
    leet[plainLength++] = l
    if (l >= 0x61 && l <= 0x7a) compact[compactLength++] = l
  }
  if (pendingNewline || pendingSpace) {
    const blank = pendingNewline ? 0x0a : 0x20
    plain[plainLength] = blank
    leet[plainLength++] = blank
  }
  const plainText = latin1(plain, plainLength)
  const plainUnits = plain.subarray(0, plainLength)
  const leetUnits = leetDiffers ? leet.subarray(0, plainLength) : plainUnits
  return {
    clean: latin1(clean, cleanLength),
    plain: plainText,
    folded: plainText,
    leet: leetDiffers ? latin1(leet, plainLength) : plainText,
    compact: latin1(compact, compactLength),
    removed,
    units: {
      clean: clean.subarray(0, cleanLength),
      plain: plainUnits,
      folded: plainUnits,
      leet: leetUnits,
      compact: compact.subarray(0, compactLength),
    },
  }
}

/**
 * Builds the views the local screen reads and counts what normalisation removed. Linear in the
 * length of `text`; never throws. Fullwidth, mathematical and other compatibility forms become
 * plain letters (NFKC); zero-width, bidirectional, tag and control characters are dropped and
 * counted; look-alikes are folded to Latin in `folded`, `leet` and `compact`.
 *
 * `general` skips the faster pass for ASCII text (tests compare the two). With `scratch`, the
 * views' bytes (`units`) are written there, valid until the next call with the same scratch.
 *
 * @example normalizeForScreen('ＩＧＮ\u200bОRE').compact === 'ignore'
 */
export function normalizeForScreen(text: string, general = false, scratch?: Scratch): NormalizedText {
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
  // Every character below 0x80 (UTF-8 as long as UTF-16: a native count, far cheaper than a
  // regular expression), and then no control characters but tab and line breaks.
  if (!general && Buffer.byteLength(nfkc, 'utf8') === nfkc.length) {
    const ascii = asciiViews(nfkc, removed, scratch)
    if (ascii !== undefined) return ascii
  }

  // `clean` is copied from `nfkc` a run of kept characters at a time (`run` is where the pending
  // run starts); `folded` (never longer than `nfkc`) is written a code unit at a time. The state
  // lives in local variables (shared with helper closures it would be kept in memory: several
  // times slower on every character), and characters are classified through tables.
  const units = toUnits(nfkc)
  const n = units.length
  let clean = ''
  let run = 0
  const folded = new Uint16Array(n)
  let length = 0
  // The last kept code point (invisibles skipped), an invisible waiting for its right-hand
  // neighbour, and the state of the current word for mixed-script detection.
  let prev = 0
  let pendingInWord = false
  let inFlag = false
  let wordAscii = false
  let wordSpoofed = false
  for (let i = 0; i < n; i++) {
    const start = i
    let cp = units[i] as number
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n) {
      const low = units[i + 1] as number
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = ((cp - 0xd800) << 10) + (low - 0xdc00) + 0x10000
        i++
      }
    }
    const kind = cp <= 0xffff ? (KIND_BMP[cp] as number) : KIND_CODE[classify(cp)]
    if (kind === KEEP) {
      if (pendingInWord && isAsciiAlnum(cp)) removed.invisibleInWord++
      pendingInWord = false
      inFlag = cp === 0x1f3f4
      prev = cp
      const look = cp <= 0xffff ? (CONFUSABLE_UNIT[cp] as number) : 0
      if (look !== 0) {
        removed.confusables++
        // Dotless ı is a letter of the Turkish and Azerbaijani alphabets: folded, not a spoof.
        if (cp !== 0x131) wordSpoofed = true
        folded[length++] = look
        continue
      }
      folded[length++] = units[start] as number
      if (cp > 0xffff) folded[length++] = units[start + 1] as number
      if (isAsciiLetter(cp)) wordAscii = true
      else if (!(cp >= 0x30 && cp <= 0x39) && !isLetterOrMarkCp(cp)) {
        // The word ends.
        if (wordAscii && wordSpoofed) removed.spoofedWords++
        wordAscii = wordSpoofed = false
      }
      continue
    }
    if (start > run) clean += nfkc.slice(run, start)
    run = i + 1
    if (kind === NEWLINE) {
      if (wordAscii && wordSpoofed) removed.spoofedWords++
      wordAscii = wordSpoofed = false
      if (cp !== 0x0d || units[i + 1] !== 0x0a) {
        clean += '\n'
        folded[length++] = 0x0a
      }
      continue
    }
    if (kind === MARK) continue
    if (kind === BIDI) removed.bidi++
    else if (kind === CONTROL) removed.control++
    else if (kind === TAG) {
      // An emoji subdivision flag (🏴 + lower-case letter tags + CANCEL TAG) is legitimate.
      const flagTag = (cp >= 0xe0061 && cp <= 0xe007a) || (cp >= 0xe0030 && cp <= 0xe0039) || cp === 0xe007f
      if (!(inFlag && flagTag)) removed.tags++
      if (cp === 0xe007f) inFlag = false
    } else if (!isLegitimateJoiner(cp, prev, nfkc, i, text.length)) {
      removed.invisible++
      if (isAsciiAlnum(prev)) pendingInWord = true
    }
  }
  if (n > run) clean += nfkc.slice(run, n)
  if (wordAscii && wordSpoofed) removed.spoofedWords++
  return views(clean, fromCodeUnits(folded, length), removed)
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/**
 * The string of `units[0..length)`, lone surrogates kept: decoded natively as UTF-16LE (copies the
 * code units as they are; `String.fromCharCode.apply` is some 25 times slower), in chunks on a
 * big-endian machine.
 */
function fromCodeUnits(units: Uint16Array, length: number): string {
  if (LITTLE_ENDIAN) return Buffer.from(units.buffer, units.byteOffset, length * 2).toString('utf16le')
  let s = ''
  for (let i = 0; i < length; i += 8192) {
    const chunk = units.subarray(i, Math.min(length, i + 8192)) as unknown as number[]
    s += String.fromCharCode.apply(null, chunk)
  }
  return s
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
