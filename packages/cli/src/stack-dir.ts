import type { Io } from './io.ts'

/** The stack directory of a command: `--dir`, `$SALLYPORT_DIR`, or the current directory. */
export function stackDir(argv: object, io: Io): string {
  const dir = (argv as { dir?: unknown }).dir
  return typeof dir === 'string' && dir.length > 0 ? dir : (io.env.SALLYPORT_DIR ?? '.')
}
