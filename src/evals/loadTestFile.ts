import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { displayPath, readSourceDocument, sortProblems, validateAgainstSchema, type SourceDocument } from "../config/index.js";
import { collectProblemsAsync, ConfigError, ERROR_CODES, type ConfigProblem } from "../errors.js";
import { Registry } from "../registry/index.js";
import { looksLikeQualifiedRef } from "../registry/ref.js";
import { prepareTactic } from "../tactics/prepareTactic.js";
import { didYouMean } from "../util/closest.js";
import { isPlainObject } from "../util/isPlainObject.js";
import { sharedAjv } from "../util/sharedAjv.js";
import { parseRegex } from "./assertions/parseRegex.js";
import { cassetteName } from "./cassettes/cassetteFile.js";
import { ASSERTION_TYPES, type AssertionSpec, type AssertionType, type TestCase, type TestFile } from "./TestFile.js";
import { resolvePackageEntry } from "../config/packageSource.js";

/** Keys an assertion may have besides its type. */
const COMMON_KEYS = ["weight", "turn", "timeout"];
const DEFAULT_CHECK_TIMEOUT_S = 30;

/** The error classes `expect-error` may name (an error's class or one of its parents), besides error codes. */
export const ERROR_CLASSES = [
  "LllmError",
  "ConfigError",
  "ModelBehaviorError",
  "ToolError",
  "SandboxError",
  "ProviderError",
  "BudgetError",
  "InterruptedError",
  "UnknownToolError",
  "ParseError",
  "CodeActionError",
  "CodeActionBudgetError",
  "CodeActionTimeoutError",
  "ProxyCallError",
  "McpToolError",
];

/**
 * Read a test file, check it (its schema, then what a schema cannot say: one type per assertion, case names that
 * make files of their own, regexes and schemas that compile, files that exist, turns that exist, the tactic) and
 * prepare its tactic, so that a bad file fails before any case runs. Every problem is reported at once, the
 * schema's and the others', with `file:line:col` and a did-you-mean, as for tactic files: the checks after the
 * schema look only at the values of the right shape.
 */
export async function loadTestFile(file: string): Promise<TestFile> {
  const absolute = path.resolve(file);
  const document = await readSourceDocument(absolute, { what: "test file" });
  const problems = validateAgainstSchema(document.data, "test", document);
  if (!isPlainObject(document.data)) throw ConfigError.fromProblems("test_invalid", problems);
  const data = document.data as unknown as RawTestFile;
  const folder = path.dirname(absolute);
  const fileVars = stringVars(data.vars);
  const cases = (Array.isArray(data.cases) ? data.cases : []).flatMap((raw, index) => (isPlainObject(raw) ? [readCase(raw, index, { document, folder, fileVars, problems })] : []));
  problems.push(...nameProblems(cases, document));
  const tacticFile = typeof data.tactic === "string" && data.tactic !== "" ? await resolveTactic(data, document, folder, problems) : undefined;
  // The tactic's own problems join the file's: one run shows everything to fix.
  const packages = (Array.isArray(data.packages) ? data.packages : []).filter((dir): dir is string => typeof dir === "string").map((dir) => resolvePackageEntry(dir, folder));
  const prepared = tacticFile === undefined ? undefined : await collectProblemsAsync(problems, () => prepareTactic(tacticFile, { ...(typeof data.model === "string" ? { model: data.model } : {}), ...(packages.length > 0 ? { packages } : {}) }));
  const pattern = prepared?.tactic.config.tactic_type ?? "agent";
  cases.forEach((entry) => {
    if (entry.conversation && entry.inputs.length > 1 && pattern !== "agent") {
      problems.push({ message: `case \`${entry.name}\` has several turns, but the tactic's tactic_type is \`${pattern}\`: a conversation continues the dialog of an agent-pattern tactic`, location: document.locate(["cases", entry.index, "turns"]) });
    }
  });
  if (problems.length > 0 || prepared === undefined) throw ConfigError.fromProblems("test_invalid", sortProblems(problems));
  return { file: absolute, shown: displayPath(absolute), tactic: data.tactic, prepared, ...(data.model !== undefined ? { model: data.model } : {}), cases: cases.map(({ index: _index, ...testCase }) => testCase) };
}

/**
 * Two cases whose names make one cassette file name: the same once made safe for a file name, or differing only by
 * case (one file on macOS and Windows, whose file systems ignore case).
 */
function nameProblems(cases: ReadonlyArray<TestCase & { index: number }>, document: SourceDocument): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const names = new Map<string, TestCase & { index: number }>();
  for (const entry of cases) {
    if (typeof entry.name !== "string") continue;
    const file = `${cassetteName(entry.name)}.yaml`;
    const key = file.toLowerCase();
    const first = names.get(key);
    if (!first) {
      names.set(key, entry);
      continue;
    }
    const why = first.name === entry.name ? "the same name" : cassetteName(first.name) === cassetteName(entry.name) ? "names that make the same file name" : "names that differ only by case, which make one file on macOS and Windows";
    problems.push({
      message: `cases[${first.index}] (\`${first.name}\`) and cases[${entry.index}] (\`${entry.name}\`) have ${why}: they would share a cassette (\`${file}\`); each case needs a name of its own`,
      location: document.locate(["cases", entry.index, "name"]),
    });
  }
  return problems;
}

interface RawTestFile {
  tactic: string;
  model?: string;
  packages?: string[];
  vars?: Record<string, unknown>;
  cases: Array<Record<string, unknown>>;
}

interface ReadContext {
  document: SourceDocument;
  folder: string;
  fileVars: Record<string, string>;
  problems: ConfigProblem[];
}

function readCase(raw: Record<string, unknown>, index: number, context: ReadContext): TestCase & { index: number } {
  const { document, problems } = context;
  const name = raw["name"] as string;
  const conversation = Array.isArray(raw["turns"]);
  const inputs = conversation ? (raw["turns"] as unknown[]) : [raw["input"]];
  const assertions: AssertionSpec[] = [];
  (Array.isArray(raw["assert"]) ? (raw["assert"] as unknown[]) : []).forEach((assertion, position) => {
    if (!isPlainObject(assertion)) return; // the schema said so
    const read = readAssertion(assertion, ["cases", index, "assert", position], context, false);
    if (!read) return;
    if (typeof read.turn === "number" && read.turn > inputs.length) problems.push({ message: `turn ${read.turn}: case \`${name}\` has ${inputs.length} turn${inputs.length === 1 ? "" : "s"}`, location: document.locate(["cases", index, "assert", position, "turn"]) });
    assertions.push(read);
  });
  const expectError = typeof raw["expect-error"] === "string" ? raw["expect-error"] : undefined;
  if (expectError !== undefined && !ERROR_CLASSES.includes(expectError) && !(ERROR_CODES as readonly string[]).includes(expectError)) {
    const hint = didYouMean(expectError, [...ERROR_CLASSES, ...ERROR_CODES]);
    problems.push({ message: `expect-error \`${expectError}\` is not an error class or code of lllm`, location: document.locate(["cases", index, "expect-error"]), hint: hint || `error classes: ${ERROR_CLASSES.join(", ")}; or an error code such as tool_rounds_exhausted` });
  }
  return {
    index,
    name,
    inputs,
    conversation,
    vars: { ...context.fileVars, ...stringVars(raw["vars"]) },
    assertions,
    ...(expectError !== undefined ? { expectError } : {}),
    ...(raw["expect-exit"] !== undefined ? { expectExit: raw["expect-exit"] as number } : {}),
    repeat: (raw["repeat"] as number | undefined) ?? 1,
    threshold: (raw["threshold"] as number | undefined) ?? 1,
    location: document.locate(["cases", index]),
  };
}

/** An assertion object as the schema let it through: one type key (maybe `not-…` or `not`) and the common keys. */
function readAssertion(raw: unknown, at: Array<string | number>, context: ReadContext, negated: boolean): AssertionSpec | undefined {
  const { document, problems } = context;
  const record = raw as Record<string, unknown>;
  const types = Object.keys(record).filter((key) => !COMMON_KEYS.includes(key));
  if (types.length !== 1) {
    problems.push({
      message: types.length === 0 ? `an assertion needs a type (${ASSERTION_TYPES.join(", ")})` : `an assertion has one type; this one has ${types.map((type) => `\`${type}\``).join(", ")} (write each as its own list item)`,
      location: document.locate(at),
    });
    return undefined;
  }
  const key = types[0]!;
  const common = { weight: (record["weight"] as number | undefined) ?? 1, ...(record["turn"] !== undefined ? { turn: record["turn"] as number } : {}), timeoutMs: ((record["timeout"] as number | undefined) ?? DEFAULT_CHECK_TIMEOUT_S) * 1000 };
  if (key === "not") {
    if (!isPlainObject(record["not"])) return undefined; // the schema said so
    const inner = readAssertion(record["not"], [...at, "not"], context, !negated);
    return inner ? { ...inner, ...common, label: `not: {${inner.label}}` } : undefined;
  }
  const type = (key.startsWith("not-") ? key.slice(4) : key) as AssertionType;
  const negate = key.startsWith("not-") !== negated;
  const value = record[key];
  const where = [...at, key];
  checkValue(type, value, where, context);
  return { type, value, negate, ...common, label: `${key}: ${labelValue(value)}`, location: document.locate(where) };
}

/** What the schema cannot check about a value: a regex that compiles, a JSON Schema that compiles, a file that exists. */
function checkValue(type: AssertionType, value: unknown, at: Array<string | number>, { document, folder, problems }: ReadContext): void {
  if (type === "regex" && typeof value === "string") {
    const parsed = parseRegex(value as string);
    if (!parsed.ok) problems.push({ message: `regex ${JSON.stringify(value)} does not compile: ${parsed.reason}`, location: document.locate(at) });
  } else if (type === "json-schema" && (isPlainObject(value) || typeof value === "boolean")) {
    try {
      sharedAjv().compile(value as object);
    } catch (error) {
      problems.push({ message: `json-schema is not a valid JSON Schema: ${(error as Error).message}`, location: document.locate(at) });
    }
  } else if (type === "javascript" && typeof value === "string") {
    const file = path.resolve(folder, value as string);
    if (!existsSync(file)) {
      const hint = didYouMean(path.basename(file), siblings(path.dirname(file)));
      problems.push({ message: `javascript check not found: ${displayPath(file)}`, location: document.locate(at), ...(hint ? { hint } : {}) });
    }
  }
}

/** The tactic's file: a path relative to the test file, or a package ref found in the test's and the project's packages. */
async function resolveTactic(data: RawTestFile, document: SourceDocument, folder: string, problems: ConfigProblem[]): Promise<string | undefined> {
  const location = document.locate(["tactic"]);
  const candidate = path.resolve(folder, data.tactic);
  if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  if (looksLikeQualifiedRef(data.tactic)) {
    const registry = new Registry();
    await registry.add({ packages: (data.packages ?? []).map((dir) => ({ dir: resolvePackageEntry(dir, folder), location: document.locate(["packages"]) })), cwd: folder });
    try {
      return registry.resolveEntry("tactics", data.tactic, { where: location }).file;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems.map((problem) => ({ ...problem, location: problem.location ?? location })));
      return undefined;
    }
  }
  const hint = didYouMean(path.basename(candidate), siblings(path.dirname(candidate)).filter((name) => /\.(ya?ml|json|[cm]?[jt]s)$/.test(name)));
  problems.push({ message: `tactic not found: ${displayPath(candidate)} (\`tactic:\` is a path relative to the test file, or a package ref like weather.tactics:weather)`, location, ...(hint ? { hint } : {}) });
  return undefined;
}

function siblings(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** Template arguments as text, as `--var` gives them. */
function stringVars(value: unknown): Record<string, string> {
  if (!isPlainObject(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, String(item)]));
}

function labelValue(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
