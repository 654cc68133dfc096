import path from "node:path";

/**
 * True when `value` is a package ref such as `weather.tactics:common` rather than a file path: `{package}.{section}:
 * {key}`. Paths never match: they start with `.` or `/`, or are absolute (`C:\…` included), or have no `pkg.section:`.
 */
export function isPackageRef(value: string): boolean {
  if (value.startsWith(".") || path.isAbsolute(value) || path.win32.isAbsolute(value)) return false;
  return /^[A-Za-z_][\w-]*\.[A-Za-z_]\w*:[^\s:]+$/.test(value);
}
