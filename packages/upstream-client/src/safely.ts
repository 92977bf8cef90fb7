/** Runs a subscriber callback; a subscriber's bug must not break delivery to the others. */
export function safely(fn: () => void): void {
  try {
    fn()
  } catch (error) {
    console.error('upstream-client: an event listener threw', error)
  }
}
