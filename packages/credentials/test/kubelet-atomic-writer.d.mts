/** `..` + the UTC time in Go's layout 2006_01_02_15_04_05 + `.` + random digits. */
export function timestampDirName(now?: Date): string
/** One kubelet atomic-writer update of `target` with `payload` (relative path → content). */
export function projectVolumeSync(
  target: string,
  payload: Readonly<Record<string, string>>,
  mode?: number,
): void
