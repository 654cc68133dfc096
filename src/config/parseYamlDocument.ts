import type { CST, Document, LineCounter, Node } from "yaml";
import { ConfigError } from "../errors.js";
import { yaml } from "../util/lazyYaml.js";
import { CONFIG_LIMITS } from "./configLimits.js";
import { quoteKey } from "./quoteKey.js";
import { aliasProblems } from "./aliasProblems.js";
import type { YamlProblem } from "./YamlProblem.js";

export type { YamlProblem } from "./YamlProblem.js";

/**
 * Parse YAML (or JSON) text into a document, within `CONFIG_LIMITS`: a file over the size limit, or nesting deeper
 * than the depth limit, is a `ConfigError` before anything recursive touches it (the depth is measured on the
 * library's token tree with a loop, not recursion). Duplicate keys are found here with one set per mapping, in
 * linear time: the library's own check compares each key with every earlier one, which takes seconds on a file of
 * many keys. Aliases the data could not hold (a cycle, no anchor, too many repeats: see aliasProblems) are problems
 * too. Returns the document and every problem (syntax errors, duplicate keys, aliases), by position.
 */
export function parseYamlDocument(
  text: string,
  options: { file: string; lineCounter: LineCounter; maxBytes?: { bytes: number; what: string; hint: string } },
): { document: Document.Parsed; problems: YamlProblem[] } {
  const { file, lineCounter } = options;
  const limit = options.maxBytes ?? { bytes: CONFIG_LIMITS.maxBytes, what: "a config file", hint: "split it (a `base:` file, package tools and prompt files) or move long texts into prompt files" };
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > limit.bytes) {
    throw new ConfigError("config_too_large", `${file}: the file is ${formatBytes(bytes)}; ${limit.what} may be at most ${formatBytes(limit.bytes)}`, { location: { file }, hint: limit.hint });
  }
  const tokens = [...new yaml.Parser(lineCounter.addNewLine).parse(text)];
  const tooDeep = deepestOffset(tokens, CONFIG_LIMITS.maxDepth);
  if (tooDeep !== undefined) {
    const { line, col } = lineCounter.linePos(tooDeep);
    throw new ConfigError("config_too_deep", `values nest more than ${CONFIG_LIMITS.maxDepth} levels deep; a config file may nest at most ${CONFIG_LIMITS.maxDepth}`, {
      location: { file, line, column: col },
      hint: "flatten the nested lists and mappings",
    });
  }
  // merge: true accepts the `<<: *defaults` idiom that YAML users reach for when sharing agent settings.
  const composer = new yaml.Composer({ prettyErrors: false, merge: true, uniqueKeys: false });
  let document: Document.Parsed | undefined;
  const problems: YamlProblem[] = [];
  for (const next of composer.compose(tokens, true, text.length)) {
    if (!document) document = next;
    else {
      problems.push({ offset: next.range[0], code: "MULTIPLE_DOCS", message: "more than one YAML document" });
      break;
    }
  }
  // compose(…, true, …) always yields a document, empty for an empty text.
  const parsed = document as Document.Parsed;
  for (const error of parsed.errors) problems.push(unclosedQuote(error, tokens) ?? { offset: error.pos[0], code: error.code, message: error.message });
  for (const problem of [...duplicateKeys(parsed), ...aliasProblems(parsed)]) problems.push(problem);
  problems.sort((a, b) => a.offset - b.offset);
  return { document: parsed, problems };
}

/**
 * A quote never closed is reported where the value it opens ends, the end of the file: the problem is where it
 * opens instead (it read `bad.yaml:6:1: Missing closing "quote`, a line the five-line file did not have).
 */
function unclosedQuote(error: { code: string; message: string; pos: [number, number] }, tokens: CST.Token[]): YamlProblem | undefined {
  const quote = /^Missing closing (["'])quote/.exec(error.message)?.[1];
  if (error.code !== "MISSING_CHAR" || quote === undefined) return undefined;
  const at = error.pos[0];
  let opening: number | undefined;
  const stack: unknown[] = [...tokens];
  while (stack.length > 0) {
    const token = stack.pop() as Record<string, unknown> | undefined;
    if (token === null || typeof token !== "object") continue;
    if (typeof token.source === "string" && typeof token.offset === "number" && token.source.startsWith(quote) && token.offset < at && at <= token.offset + token.source.length + 1) {
      opening = Math.max(opening ?? -1, token.offset);
    }
    for (const key of ["start", "key", "sep", "value", "items", "end"]) {
      const child = token[key];
      if (Array.isArray(child)) stack.push(...child);
      else if (child !== null && typeof child === "object") stack.push(child);
    }
  }
  if (opening === undefined) return undefined;
  return { offset: opening, code: error.code, message: `the ${quote === '"' ? "double" : "single"} quote that opens a value here is never closed (the value runs on to the end of the file)` };
}

/** The offset of the first collection nested deeper than `limit`, or undefined. */
function deepestOffset(tokens: CST.Token[], limit: number): number | undefined {
  const stack: Array<{ token: CST.Token | undefined; depth: number }> = tokens.map((token) => ({ token, depth: 0 }));
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    if (!token) continue;
    const isCollection = token.type === "block-map" || token.type === "block-seq" || token.type === "flow-collection";
    const here = depth + (isCollection ? 1 : 0);
    if (here > limit) return token.offset;
    if (token.type === "document") stack.push({ token: token.value, depth: here });
    else if (isCollection) {
      for (const item of token.items) {
        if ("key" in item) stack.push({ token: item.key ?? undefined, depth: here });
        stack.push({ token: item.value, depth: here });
      }
    }
  }
  return undefined;
}

/** Every key written twice in one mapping (scalar keys, compared by value, as the yaml library does). */
function duplicateKeys(document: Document.Parsed): YamlProblem[] {
  const problems: YamlProblem[] = [];
  const stack: unknown[] = [document.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    // One at a time, not push(...items): a list of some 100,000 items would overflow the call stack.
    if (yaml.isSeq(node)) for (const item of node.items) stack.push(item);
    else if (yaml.isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = pair.key as Node | null;
        if (yaml.isScalar(key)) {
          if (seen.has(key.value)) problems.push({ offset: key.range?.[0] ?? 0, code: "DUPLICATE_KEY", message: `duplicate key ${quoteKey(typeof key.value === "symbol" ? "<<" : String(key.value))}: each key may appear once in a mapping` });
          seen.add(key.value);
        } else stack.push(key);
        stack.push(pair.value);
      }
    }
  }
  return problems;
}


function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
