import type * as Zod from "zod";
import { lazyObject, requireVendored } from "./lazyModule.js";

/** zod's module, loaded (its CommonJS build) the first time a name is read from it. */
export const zodModule: typeof Zod = lazyObject(() => requireVendored<typeof Zod>("zod"));

/**
 * zod's `z`, loaded on first use: `import { z } from "lllm"` works as before, but a program or command that never
 * builds a zod schema does not pay for loading zod.
 */
export const z: typeof Zod.z = lazyObject(() => requireVendored<typeof Zod>("zod").z);
