import type * as Yaml from "yaml";
import { lazyObject, requireVendored } from "./lazyModule.js";

/**
 * The yaml library, loaded (its CommonJS build) the first time a name is read from it: `import "lllm"` does not
 * pay for it, commands that read a YAML file do. Its node checks (`isMap`, …) test symbols shared by every copy.
 */
export const yaml: typeof Yaml = lazyObject(() => requireVendored<typeof Yaml>("yaml"));
