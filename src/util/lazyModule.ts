import { createRequire } from "node:module";
import { requireCompiled } from "./codeCache.js";

const require = createRequire(import.meta.url);

/**
 * A stand-in for a module's exports (or any object) that loads it with `require` on first use: start-up only pays
 * for a heavy dependency (zod, ajv) when something touches it. The package's CommonJS build is loaded, so it
 * works from synchronous code. Reading, listing and `in` go to the real object.
 */
export function lazyObject<T extends object>(load: () => T): T {
  let real: T | undefined;
  const get = (): T => (real ??= load());
  return new Proxy(Object.create(null) as T, {
    get: (_target, key) => Reflect.get(get(), key),
    has: (_target, key) => Reflect.has(get(), key),
    ownKeys: () => Reflect.ownKeys(get()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(get(), key);
      // A proxy may not report a property as non-configurable when its own target lacks it.
      return descriptor ? { ...descriptor, configurable: true } : undefined;
    },
  });
}

/** The dependencies the build bundles into one file each (scripts/bundle.js writes dist/vendor/<name>.cjs). */
export type VendoredModule = "zod" | "yaml" | "commander" | "mcp-server" | "mcp-server-http";

/**
 * A dependency from its one-file copy in dist/vendor/ when lllm runs built, else (tests run src/) from
 * node_modules. Node resolves and reads each file of a package on its own: zod is 95 files, yaml 72, which cost
 * start-up more than their code. The path goes through the folder's name, so it holds from dist/util/ and from
 * the bundle in dist/bundle/ alike.
 */
export function requireVendored<T>(id: VendoredModule, fromNodeModules: () => T = () => require(id) as T): T {
  try {
    return requireCompiled(require.resolve(`../vendor/${id}.cjs`), require) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND" || !String((error as Error).message).includes(`vendor/${id}.cjs`)) throw error;
    return fromNodeModules();
  }
}

/** `require(id)` now, relative to lllm's own folder: for code that needs a CommonJS dependency synchronously. */
export function requireNow<T>(id: string): T {
  return require(id) as T;
}
