import type { SourceLocator } from "./SourceDocument.js";

/**
 * A locator for data whose positions are unknown (a JS config module, a TOML manifest): every problem points at
 * the file itself, which is still better than pointing nowhere.
 */
export function fileLocator(file: string): SourceLocator {
  return { file, locate: () => ({ file }), locateKey: () => ({ file }) };
}
