import path from "node:path";
import { looksLikeQualifiedRef } from "./ref.js";

/**
 * True when `value` is a package ref such as `weather.tactics:common` rather than a file path. One grammar for refs
 * (config/ref.ts) decides; a path that starts with `.` or `/`, or is absolute (`C:\…` included), never is one.
 */
export function isPackageRef(value: string): boolean {
  if (value.startsWith(".") || path.isAbsolute(value) || path.win32.isAbsolute(value)) return false;
  return looksLikeQualifiedRef(value);
}
