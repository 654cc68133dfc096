/**
 * The most a package may weigh. A package is prompts, tactics and tool code: these bounds leave room for large
 * data files, and stop a compressed archive that unpacks into gigabytes (or a registry that never stops sending)
 * before it fills the disk.
 */
export const PACKAGE_LIMITS = {
  /** Bytes of a downloaded archive or layer. */
  archiveBytes: 64 * 1024 * 1024,
  /** Bytes of all the files of a package, unpacked. */
  unpackedBytes: 128 * 1024 * 1024,
  /** Files and folders in a package. */
  entries: 20_000,
} as const;

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MiB` : bytes >= 1024 ? `${Math.round(bytes / 1024)} KiB` : `${bytes} bytes`;
}
