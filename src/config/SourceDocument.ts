import type { Document, LineCounter, Node, Pair, YAMLMap } from "yaml";
import { yaml } from "../util/lazyYaml.js";
import { ConfigError } from "../errors.js";
import type { ConfigProblem, SourceLocation } from "../errors.js";
import { parseYamlDocument } from "./parseYamlDocument.js";
import type { YamlProblem } from "./parseYamlDocument.js";
import { firstLine } from "../util/firstLine.js";
import { hasPath } from "./hasPath.js";
import { readParsedYaml, storeParsedYaml } from "./parsedYamlCache.js";
import { isPlainObject } from "../util/isPlainObject.js";
import { CONFIG_LIMITS } from "./configLimits.js";
import { registerUrlCredentials } from "../util/redact.js";

/** A path into parsed data: object keys and list indexes, e.g. `["agent_configs", 0, "tools", 1]`. */
export type DataPath = ReadonlyArray<string | number>;

/** Turns a path into the data back into a place in the file it was read from. */
export interface SourceLocator {
  readonly file: string;
  /** Where the value at `path` is; for a path that does not exist, the nearest existing parent. */
  locate(path: DataPath): SourceLocation;
  /** Where the key that ends `path` is written (for "unknown key" problems); falls back to `locate`. */
  locateKey(path: DataPath): SourceLocation;
}

/** What a walk down a path found: the deepest node reached, and the key node of the last step when it matched. */
interface Found {
  node: Node | null;
  key: Node | null;
  complete: boolean;
}

/** One mapping's keys, indexed once: a file with many keys is located in linear time, not a scan per key. */
interface KeyIndex {
  /** The first pair of each key (as `String(key)`). */
  pairs: Map<string, { key: Node | null; value: Node | null }>;
  /** The values of `<<` merge keys, in order. */
  mergeSources: Node[];
}

/**
 * A YAML (or JSON, which YAML reads too) file parsed with its source positions kept, so that every problem found
 * later in the data can point at `file:line:column`. The top level must be a mapping.
 */
export class SourceDocument implements SourceLocator {
  readonly file: string;
  /** The plain data (aliases and `<<` merge keys expanded). */
  readonly data: Record<string, unknown>;
  /** Absent for data that was never text (a tactic written in code): its locations are the file alone. */
  #document: Document.Parsed | undefined;
  #lineCounter: LineCounter | undefined;
  /** The text of data read from the parse cache: parsed again only when a location is asked for. */
  #text: string | undefined;
  private readonly keyIndexes = new WeakMap<YAMLMap, KeyIndex>();

  private constructor(file: string, data: Record<string, unknown>, source?: { document: Document.Parsed; lineCounter: LineCounter } | { text: string }) {
    this.file = file;
    this.data = data;
    // A password in a URL of the file (a base URL, a proxy's, an MCP server's) is a secret from now on.
    registerUrlCredentials(data);
    if (source && "text" in source) this.#text = source.text;
    else if (source) {
      this.#document = source.document;
      this.#lineCounter = source.lineCounter;
    }
  }

  private get document(): Document.Parsed | undefined {
    if (this.#text !== undefined) {
      // Parsed before without a problem (see parsedYamlCache), so this parse succeeds too.
      const lineCounter = new yaml.LineCounter();
      this.#document = parseYamlDocument(this.#text, { file: this.file, lineCounter }).document;
      this.#lineCounter = lineCounter;
      this.#text = undefined;
    }
    return this.#document;
  }

  private get lineCounter(): LineCounter | undefined {
    return this.document ? this.#lineCounter : undefined;
  }

  /**
   * Parse `text`. Throws a `ConfigError` (`config_parse`) listing every syntax error (broken YAML, duplicate keys,
   * tabs used for indentation, …) with its position, or saying what was expected when the file is empty or its top
   * level is not a mapping. `file` is the name used in locations. With `allowEmpty`, an empty file (or one of only
   * comments) is an empty mapping. A file over the size or nesting limits (`CONFIG_LIMITS`) is a `ConfigError`
   * (`config_too_large`, `config_too_deep`). `shipped`: a file of lllm's own, kept in the parse cache even where
   * its keys are named like credentials (see storeParsedYaml).
   */
  static parse(text: string, file: string, options: { allowEmpty?: boolean; shipped?: boolean } = {}): SourceDocument {
    const cached = readParsedYaml(text);
    if (isPlainObject(cached)) return new SourceDocument(file, cached, { text });
    const lineCounter = new yaml.LineCounter();
    const { document, problems: found } = parseYamlDocument(text, { file, lineCounter });
    const position = (offset: number): SourceLocation => {
      const { line, col } = lineCounter.linePos(offset);
      return { file, line, column: col };
    };
    if (found.length > 0) {
      const problems: ConfigProblem[] = found.map((problem) => ({
        message: describeYamlError(problem),
        location: position(problem.offset),
      }));
      throw ConfigError.fromProblems("config_parse", problems);
    }
    const contents = document.contents;
    if (contents === null || (yaml.isScalar(contents) && contents.value === null)) {
      if (options.allowEmpty) return new SourceDocument(file, {}, { document, lineCounter });
      throw ConfigError.fromProblems("config_parse", [
        { message: "the file is empty: expected a mapping of keys (key: value) at the top level", location: { file } },
      ]);
    }
    if (!yaml.isMap(contents)) {
      const what = yaml.isSeq(contents) ? "a list" : "a single value";
      throw ConfigError.fromProblems("config_parse", [
        {
          message: `the top level is ${what}: expected a mapping of keys (key: value)`,
          location: contents.range ? position(contents.range[0]) : { file },
        },
      ]);
    }
    let data: unknown;
    try {
      data = document.toJS({ maxAliasCount: CONFIG_LIMITS.maxAliasCount });
    } catch (error) {
      throw ConfigError.fromProblems("config_parse", [
        { message: `cannot expand the file's aliases: ${error instanceof Error ? error.message : String(error)}`, location: { file } },
      ]);
    }
    storeParsedYaml(text, data, { shipped: options.shipped === true });
    return new SourceDocument(file, data as Record<string, unknown>, { document, lineCounter });
  }

  /**
   * Data that has no text: a tactic written in code gives its config as an object. It is used as it is (not
   * printed as YAML and parsed again); every location is the file itself.
   */
  static fromData(file: string, data: Record<string, unknown>): SourceDocument {
    return new SourceDocument(file, data);
  }

  /** True when `path` names a value present in the file. */
  has(path: DataPath): boolean {
    if (this.#text !== undefined || !this.document) return hasPath(this.data, path);
    return this.find(path).complete;
  }

  locate(path: DataPath): SourceLocation {
    return this.lazily(() => this.position(this.find(path).node));
  }

  locateKey(path: DataPath): SourceLocation {
    return this.lazily(() => {
      const found = this.find(path);
      return this.position(found.complete && found.key ? found.key : found.node);
    });
  }

  /**
   * Data read from the parse cache has no document yet: its locations are worked out when first read (a line
   * printed in an error), not when they are only passed along, so a run that goes well never parses the text.
   */
  private lazily(compute: () => SourceLocation): SourceLocation {
    if (this.#text === undefined) return compute();
    let found: SourceLocation | undefined;
    const get = (): SourceLocation => (found ??= compute());
    return Object.defineProperties({ file: this.file } as SourceLocation, {
      line: { get: () => get().line, enumerable: true, configurable: true },
      column: { get: () => get().column, enumerable: true, configurable: true },
    });
  }

  private position(node: Node | null): SourceLocation {
    const offset = node?.range?.[0];
    if (offset === undefined || !this.lineCounter) return { file: this.file };
    const { line, col } = this.lineCounter.linePos(offset);
    return { file: this.file, line, column: col };
  }

  private find(path: DataPath): Found {
    if (!this.document) return { node: null, key: null, complete: false };
    let node = this.resolve(this.document.contents);
    let key: Node | null = null;
    for (const segment of path) {
      const next = this.step(node, segment);
      if (!next) return { node, key: null, complete: false };
      node = this.resolve(next.value);
      key = next.key;
      // `key:` with no value has no node, or an empty one after the colon: point at the key instead.
      if (node === null || isEmptyScalar(node)) return { node: key ?? node, key, complete: true };
    }
    return { node, key, complete: true };
  }

  private step(node: Node | null, segment: string | number): { key: Node | null; value: Node | null } | undefined {
    if (yaml.isSeq(node)) {
      const index = typeof segment === "number" ? segment : /^\d+$/.test(segment) ? Number(segment) : undefined;
      if (index === undefined) return undefined;
      const item = node.items[index];
      return item === undefined ? undefined : { key: null, value: asNode(item) };
    }
    if (!yaml.isMap(node)) return undefined;
    const index = this.keyIndex(node);
    const own = index.pairs.get(String(segment));
    if (own) return own;
    // A key inherited through `<<: *anchor` is written where the anchor is defined.
    for (const source of index.mergeSources) {
      const found = this.step(this.resolve(source), segment);
      if (found) return found;
    }
    return undefined;
  }

  private keyIndex(node: YAMLMap): KeyIndex {
    let index = this.keyIndexes.get(node);
    if (index) return index;
    index = { pairs: new Map(), mergeSources: [] };
    for (const pair of node.items as Array<Pair<unknown, unknown>>) {
      const keyNode = asNode(pair.key);
      const keyValue = yaml.isScalar(keyNode) ? keyNode.value : pair.key;
      // With `merge: true` the yaml library marks a `<<` key with a symbol.
      const isMergeKey = keyValue === "<<" || typeof keyValue === "symbol";
      if (isMergeKey && pair.value) index.mergeSources.push(...mergeTargets(asNode(pair.value)));
      else if (!index.pairs.has(String(keyValue))) index.pairs.set(String(keyValue), { key: keyNode, value: asNode(pair.value) });
    }
    this.keyIndexes.set(node, index);
    return index;
  }

  private resolve(node: Node | null): Node | null {
    let current = node;
    for (let depth = 0; yaml.isAlias(current) && depth < CONFIG_LIMITS.maxAliasCount; depth++) {
      current = (current.resolve(this.document!) as Node | undefined) ?? null; // only reached through find(), with a document
    }
    return current;
  }
}

function isEmptyScalar(node: Node): boolean {
  return yaml.isScalar(node) && node.value === null && node.range !== undefined && node.range !== null && node.range[0] === node.range[1];
}

function asNode(value: unknown): Node | null {
  return value !== null && typeof value === "object" && "range" in value ? (value as Node) : null;
}

function mergeTargets(value: Node | null): Node[] {
  if (yaml.isSeq(value)) return value.items.map(asNode).filter((item): item is Node => item !== null);
  return value ? [value] : [];
}

/** The yaml library's message, made specific where it speaks to programmers rather than to the file's author. */
function describeYamlError(error: YamlProblem): string {
  if (error.code === "DUPLICATE_KEY") return error.message;
  if (error.code === "MULTIPLE_DOCS") return "more than one YAML document (a second `---`): the file must hold one";
  // Messages may end with a source excerpt when prettified; the location already says where.
  return firstLine(error.message).replace(/:$/, "").trim();
}
