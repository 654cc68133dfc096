/** A package's code file, loaded with jiti: TypeScript or JavaScript, in any module flavour. */
export const CODE_FILE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;

/** True for a code file name (`.ts`, `.mts`, `.cts`, `.js`, `.mjs`, `.cjs`). */
export function isCodeFile(file: string): boolean {
  return CODE_FILE.test(file);
}
