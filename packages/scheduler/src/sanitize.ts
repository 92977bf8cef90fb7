/**
 * Text from the runtime or a provider as the history may keep it: one line, at most 300
 * characters, with host paths and anything shaped like a key or token replaced.
 */
export function sanitizeMessage(text: string): string {
  return (
    text
      .slice(0, 4000)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
      .replace(/[\u0000-\u001f\u007f]+/g, ' ')
      .replace(/\b(?:sk|pk|rk|key|api|token|ghp|gho|xox[abp])[-_][A-Za-z0-9_-]{8,}/gi, '<redacted>')
      .replace(/\b(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '<redacted>')
      .replace(/[A-Za-z0-9+/_=-]{32,}/g, '<redacted>')
      // A directory name may hold spaces (it is followed by a separator); the last name may not,
      // so the words after a path stay.
      .replace(/(?:[A-Za-z]:)?(?:[\\/][\w.@~-]+(?: [\w.@~-]+)*(?=[\\/]))+[\\/][\w.@~-]+[\\/]?/g, '<path>')
      .replace(/\b(?:ses|msg|prt|per|que)_[A-Za-z0-9]{8,}/g, '<id>')
      .trim()
      .slice(0, 300)
  )
}
