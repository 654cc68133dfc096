import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root folder (where package.json is). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The built CLI a user runs (`dist/` must be built: `npm run build`). */
export const BIN = path.join(ROOT, "bin", "lllm.js");
/** The example packages shipped with lllm. */
export const EXAMPLE = path.join(ROOT, "packages-example");
