import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { screenLocally } from '../src/moderation/local-screen.js'

// The local screen against the corpus in test/moderation-corpus/ (its README says how the corpus
// was written and what the rates are): every hostile input must be escalated to the moderator,
// and fewer than 5% of the benign engineering requests may be. The measured rates are recorded as
// test annotations (shown by `vitest run --reporter=verbose`) and must match the table in the README.

interface CorpusEntry {
  id: string
  text: string
  source: string
}

interface HostileEntry extends CorpusEntry {
  technique: string
}

const read = (name: string): string =>
  readFileSync(new URL(`./moderation-corpus/${name}`, import.meta.url), 'utf8')
const benign = JSON.parse(read('benign.json')) as CorpusEntry[]
const hostile = JSON.parse(read('hostile.json')) as HostileEntry[]

const MIN_ENTRIES = 150
const MAX_FALSE_ESCALATION_RATE = 0.05

const escalated = (entries: readonly CorpusEntry[]): CorpusEntry[] =>
  entries.filter((entry) => screenLocally(entry.text).escalate)
const percent = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)}%`

describe('the moderation corpus', () => {
  it.each([
    ['benign.json', benign, /^benign-[a-z0-9]+(?:-[a-z0-9]+)*-\d{3}$/],
    ['hostile.json', hostile, /^hostile-[a-z0-9]+(?:-[a-z0-9]+)*-\d{3}$/],
  ] as const)(
    '%s holds at least 150 well-formed entries, each with its source',
    (_name, entries, idShape) => {
      expect(entries.length).toBeGreaterThanOrEqual(MIN_ENTRIES)
      for (const entry of entries) {
        expect(entry.id).toMatch(idShape)
        expect(typeof entry.text === 'string' && entry.text.length > 0, entry.id).toBe(true)
        // Everything in the corpus was written for this repository (see the README).
        expect(entry.source, entry.id).toMatch(/^authored for sallyport\b/)
      }
      expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length)
      expect(new Set(entries.map((entry) => entry.text)).size).toBe(entries.length)
    },
  )

  it('every hostile entry names its technique, and no text is in both files', () => {
    for (const entry of hostile) expect(entry.technique, entry.id).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/)
    const benignTexts = new Set(benign.map((entry) => entry.text))
    expect(hostile.filter((entry) => benignTexts.has(entry.text)).map((entry) => entry.id)).toEqual([])
  })
})

describe('the local screen on the corpus', () => {
  it('escalates every hostile input', async ({ annotate }) => {
    const caught = new Set(escalated(hostile).map((entry) => entry.id))
    const missed = hostile.filter((entry) => !caught.has(entry.id)).map((entry) => entry.id)
    const byTechnique = new Map<string, [number, number]>()
    for (const entry of hostile) {
      const [hit, all] = byTechnique.get(entry.technique) ?? [0, 0]
      byTechnique.set(entry.technique, [hit + (caught.has(entry.id) ? 1 : 0), all + 1])
    }
    await annotate(
      `hostile escalated ${caught.size}/${hostile.length} (${percent(caught.size, hostile.length)}); by technique: ${[
        ...byTechnique,
      ]
        .map(([technique, [hit, all]]) => `${technique} ${hit}/${all}`)
        .join(', ')}`,
    )
    expect(missed, `hostile inputs not escalated (${missed.length}): ${missed.join(', ')}`).toEqual([])
  })

  it('escalates fewer than 5% of the benign inputs', async ({ annotate }) => {
    const falseEscalations = escalated(benign)
    const rate = falseEscalations.length / benign.length
    const listed = falseEscalations
      .map((entry) => `${entry.id} [${screenLocally(entry.text).rules.join(', ')}]`)
      .join('; ')
    await annotate(
      `benign escalated ${falseEscalations.length}/${benign.length} (${percent(falseEscalations.length, benign.length)} false escalations)${listed ? `: ${listed}` : ''}`,
    )
    expect(
      rate,
      `benign inputs escalated (${falseEscalations.length}/${benign.length}): ${listed}`,
    ).toBeLessThan(MAX_FALSE_ESCALATION_RATE)
  })

  it('the README reports the rates measured here', () => {
    const readme = read('README.md')
    const reported = (file: string): [number, number] | undefined => {
      const row = readme.match(new RegExp(`^\\| \`${file}\` +\\| +(\\d+) +\\| +(\\d+) +\\|`, 'm'))
      return row ? [Number(row[1]), Number(row[2])] : undefined
    }
    const measured = (entries: readonly CorpusEntry[]): [number, number] => [
      entries.length,
      escalated(entries).length,
    ]
    expect(reported('hostile.json'), 'update the table in test/moderation-corpus/README.md').toEqual(
      measured(hostile),
    )
    expect(reported('benign.json'), 'update the table in test/moderation-corpus/README.md').toEqual(
      measured(benign),
    )
  })
})
