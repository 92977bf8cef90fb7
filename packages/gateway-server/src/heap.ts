import { setFlagsFromString } from 'node:v8'

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it
 * collects again, in percent, for a process whose main job is this gateway.
 *
 * A gateway holds many requests open for seconds (waits of up to 30 s): what they allocate
 * survives the young generation and lands in the old one as garbage. V8's default growth (up to
 * 4x the live heap under a high allocation rate) then lets RSS climb for minutes and keeps the
 * pages: the load harness measured 149 → 273 MiB (1.83x) over a 150 s soak of 100 clients with
 * about 40 MiB live. At 60 % a 120 s soak stayed at 151 → 159 MiB (1.05x), every job completed,
 * for about 2 % more CPU per trivial call (`pnpm bench:http`); 30 % kept the same RSS for 9-18 %
 * more CPU. Unlike `--max-old-space-size` this sets no ceiling: a heap that must grow still
 * grows, it is only collected sooner.
 */
export const SERVER_HEAP_GROWING_PERCENT = 60

/**
 * Tunes the process's V8 heap for a long-running gateway ({@link SERVER_HEAP_GROWING_PERCENT}).
 * Process-wide: call it from the program that owns the process (the `sallyport` CLI's `up` and
 * `serve` do), not from a library that merely embeds the gateway. Takes effect from the next
 * collection; safe to call more than once.
 */
export function tuneHeapForServer(percent: number = SERVER_HEAP_GROWING_PERCENT): void {
  if (!Number.isInteger(percent) || percent < 1 || percent > 400)
    throw new RangeError('tuneHeapForServer: percent must be an integer from 1 to 400')
  setFlagsFromString(`--heap-growing-percent=${percent}`)
}
