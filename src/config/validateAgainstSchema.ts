import type { AnySchemaObject, ErrorObject } from "ajv";
import type { ConfigProblem } from "../errors.js";
import { describeSchemaError, got, typeWords } from "./describeSchemaError.js";
import type { DescribeOptions } from "./describeSchemaError.js";
import { formatKeyPath } from "./formatKeyPath.js";
import { schemaValidator } from "./schemaValidator.js";
import type { SchemaName } from "./schemaValidator.js";
import { sortProblems } from "./sortProblems.js";
import type { DataPath, SourceLocator } from "./SourceDocument.js";

/**
 * Every problem of `data` against one of the static schemas (compiled at build time), located in the file it came from and sorted by line; an empty
 * list when it is valid. ajv's cascades are collapsed: an `anyOf`/`oneOf` that fails yields the most useful branch
 * (or one line naming the accepted forms), never one line per branch. Branches of `anyOf`/`oneOf` should be written
 * inline rather than through `$ref`, so their errors can be told apart.
 */
export function validateAgainstSchema(data: unknown, schema: SchemaName | AnySchemaObject, locator: SourceLocator, options: DescribeOptions = {}): ConfigProblem[] {
  const validate = schemaValidator(schema);
  if (validate(data)) return [];
  // An `if` that failed its `then` ("must match \"then\" schema") only sums up the errors of the `then`, each reported.
  const errors = collapse((validate.errors ?? []).filter((error) => error.keyword !== "if"));
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  for (const item of errors) {
    const path = toDataPath(item.error.instancePath, data);
    const problem = item.message
      ? { message: item.message(path.length === 0 ? (options.rootName ?? "the top level") : formatKeyPath(path)), location: locator.locate(path) }
      : describeSchemaError(item.error, path, locator, options);
    const key = `${problem.message}@${problem.location?.line ?? ""}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push(problem);
    }
  }
  return sortProblems(problems);
}

/** An error to report: described from the ajv error, or with a message of its own built from collapsing a cascade. */
interface Reported {
  error: ErrorObject;
  message?: (where: string) => string;
}

const ALTERNATIVES = new Set(["anyOf", "oneOf"]);

function collapse(errors: ErrorObject[]): Reported[] {
  const replaced = new Map<ErrorObject, Reported[]>();
  // Innermost alternatives first, so an outer one sees its branches already collapsed.
  const alternatives = errors.filter((error) => ALTERNATIVES.has(error.keyword)).sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  if (alternatives.length === 0) return errors.map((error) => ({ error }));
  const order = new Map(alternatives.map((alternative, index) => [alternative, index]));
  const byPlace = new Map<string, ErrorObject[]>();
  for (const alternative of alternatives) {
    const place = placeKey(alternative.schemaPath, alternative.instancePath);
    byPlace.set(place, [...(byPlace.get(place) ?? []), alternative]);
  }
  // Each error belongs to the innermost alternative whose schema path is a prefix of its own, at its item or an
  // item above it (the same schema applies to every item of a list). Found by looking up the error's own prefixes,
  // so that a file with thousands of failing items takes linear time, not one pass over all errors per item.
  const branchesOf = new Map<ErrorObject, Map<number, ErrorObject[]>>();
  const dropped = new Set<ErrorObject>();
  for (const error of errors) {
    let owner: ErrorObject | undefined;
    for (const schemaPrefix of prefixes(error.schemaPath)) {
      for (const instancePrefix of prefixes(error.instancePath, true)) {
        for (const candidate of byPlace.get(placeKey(schemaPrefix, instancePrefix)) ?? []) {
          if (owner === undefined || order.get(candidate)! < order.get(owner)!) owner = candidate;
        }
      }
    }
    if (!owner) continue;
    const index = Number(error.schemaPath.slice(owner.schemaPath.length + 1).split("/")[0]);
    const branches = branchesOf.get(owner) ?? new Map<number, ErrorObject[]>();
    branches.set(index, [...(branches.get(index) ?? []), error]);
    branchesOf.set(owner, branches);
    dropped.add(error);
  }
  for (const alternative of alternatives) {
    replaced.set(alternative, explainAlternative(alternative, branchesOf.get(alternative) ?? new Map(), replaced));
  }
  const result: Reported[] = [];
  for (const error of errors) {
    if (dropped.has(error)) continue;
    result.push(...(replaced.get(error) ?? [{ error }]));
  }
  return result;
}

function placeKey(schemaPath: string, instancePath: string): string {
  return `${schemaPath}\u0000${instancePath}`;
}

/** The proper prefixes of a `/`-separated path that end before a `/` (`#/a/b` → `#`, `#/a`); with `self`, the path too. */
function prefixes(path: string, self = false): string[] {
  const found: string[] = [];
  for (let index = path.indexOf("/"); index !== -1; index = path.indexOf("/", index + 1)) found.push(path.slice(0, index));
  if (self) found.push(path);
  return found;
}

function explainAlternative(alternative: ErrorObject, branches: Map<number, ErrorObject[]>, replaced: Map<ErrorObject, Reported[]>): Reported[] {
  const branchSchemas = ((alternative.parentSchema?.[alternative.keyword] ?? []) as Array<Record<string, unknown>>);
  const requiredOnly = branchSchemas.length > 0 && branchSchemas.every((branch) => Object.keys(branch).length === 1 && Array.isArray(branch.required));
  const keysOf = () => branchSchemas.flatMap((branch) => branch.required as string[]).map((key) => `\`${key}\``);
  const passing = (alternative.params as { passingSchemas?: unknown }).passingSchemas;
  if (passing !== undefined && passing !== null) {
    // oneOf matched more than one branch.
    if (requiredOnly) return [{ error: alternative, message: (where) => `${where} must set only one of ${keysOf().join(", ")}` }];
    return [{ error: alternative, message: (where) => `${where} matches more than one of its accepted forms` }];
  }
  if (requiredOnly) {
    return [{ error: alternative, message: (where) => `${where} must set ${orList(keysOf())}` }];
  }
  if (branches.size === 0) {
    // Branches written through $ref report errors under their own schema paths; say what is known.
    return [{ error: alternative, message: (where) => `${where} does not match any of its accepted forms` }];
  }
  const atSamePlace = (error: ErrorObject) => error.instancePath === alternative.instancePath && error.keyword === "type";
  const candidates = [...branches.values()];
  const typeFits = candidates.filter((branch) => !branch.some(atSamePlace));
  if (typeFits.length === 0) {
    // The value has none of the accepted types: name them all in one line.
    const types = candidates.flatMap((branch) => branch.filter(atSamePlace).flatMap((error) => [(error.params as { type: unknown }).type].flat()));
    return [{ error: alternative, message: (where) => `${where} must be ${typeWords([...new Set(types.map(String))])}${got(alternative.data)}` }];
  }
  // The branch the value was evidently meant for: its type fits; of those, the one with the fewest complaints.
  const best = typeFits.sort((a, b) => a.length - b.length)[0] ?? [];
  return best.flatMap((error) => replaced.get(error) ?? [{ error }]);
}

function orList(items: string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/** ajv's JSON Pointer as a data path, with list indexes as numbers (decided by the data, since keys may be digits). */
function toDataPath(pointer: string, data: unknown): DataPath {
  if (pointer === "") return [];
  const path: Array<string | number> = [];
  let current: unknown = data;
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(current)) {
      const index = Number(segment);
      path.push(index);
      current = current[index];
    } else {
      path.push(segment);
      current = current !== null && typeof current === "object" ? (current as Record<string, unknown>)[segment] : undefined;
    }
  }
  return path;
}
