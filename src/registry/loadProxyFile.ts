import { displayPath } from "../config/displayPath.js";
import { ConfigError } from "../errors.js";
import { importModule } from "./importModule.js";
import type { ProxyDefinition, ProxySource } from "../proxies/ProxyDefinition.js";
import { readProxyFile } from "../proxies/readProxyFile.js";
import { toProxyDefinition } from "../proxies/toProxyDefinition.js";
import { errorFirstLine } from "../util/firstLine.js";
import { isCodeFile } from "../util/codeFile.js";


/**
 * The proxies of one file of a package's `proxies/` folder: a YAML/JSON file is one declarative proxy; a code file
 * may export several made with `proxy()` (or plain specs). A code file that exports none is an error, since a file
 * in `proxies/` is there to define one. This is what a `pkg.proxies:name` ref resolves to.
 */
export async function loadProxyFile(file: string, source: Omit<ProxySource, "file" | "kind"> = {}): Promise<ProxyDefinition[]> {
  if (!isCodeFile(file)) return [await readProxyFile(file, { kind: "yaml", ...source })];
  let exports: Record<string, unknown>;
  try {
    exports = await importModule(file);
  } catch (error) {
    throw new ConfigError("proxy_load_failed", `proxy file failed to load: ${errorFirstLine(error)}`, {
      location: { file: displayPath(file) },
      hint: "Fix the error in this file (it runs when the proxies load); `import { proxy } from \"lllm\"` needs nothing installed.",
      cause: error,
    });
  }
  const found: ProxyDefinition[] = [];
  const seen = new Set<unknown>();
  for (const value of Object.values(exports)) {
    // `export default p` and `export { p }` are one proxy.
    if (seen.has(value)) continue;
    seen.add(value);
    let definition: ProxyDefinition | undefined;
    try {
      definition = toProxyDefinition(value);
    } catch (error) {
      if (error instanceof ConfigError) {
        throw ConfigError.fromProblems(error.code, error.problems.map((problem) => ({ ...problem, location: { file: displayPath(file) }, message: `${problem.location ? `${problem.location.file}: ` : ""}${problem.message}` })));
      }
      throw error;
    }
    if (definition) found.push({ ...definition, source: { file, kind: "code", ...source } });
  }
  if (found.length === 0) {
    throw new ConfigError("proxy_invalid", "this file in proxies/ exports no proxy", {
      location: { file: displayPath(file) },
      hint: 'Write `export default proxy({ path: "…", name: "…", description: "…", endpoints: [...] })` with `import { proxy } from "lllm"`.',
    });
  }
  return found;
}

