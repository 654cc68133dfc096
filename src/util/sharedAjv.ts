import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Ajv2020, ValidateFunction } from "ajv/dist/2020.js";
import { privateFolder } from "./privateFolder.js";

const require = createRequire(import.meta.url);

/** The options of the shared instance; part of the cache key, since the generated code depends on them. */
const OPTIONS = { allErrors: true, useDefaults: true, verbose: true, strict: false, allowUnionTypes: true, validateSchema: false, meta: false } as const;

let shared: Ajv2020 | undefined;
let cacheFolder: string | undefined;

/**
 * Keep generated validators in `folder` (the CLI uses `$LLLM_HOME/cache/validators`); `undefined` turns the disk
 * cache off, as it is for library users unless they turn it on.
 */
export function useValidatorCache(folder: string | undefined): void {
  cacheFolder = folder;
  cacheChecked = false;
}

let cacheChecked = false;

/**
 * The one Ajv for the schemas only known at run time (tools' parameters, a tactic's input as a tool), created on
 * first use: commands that call no tool never load ajv. It caches compiled schemas. `useDefaults` fills defaults
 * in, `allErrors` lets the model fix every mistake in one retry, `verbose` gives each error its schema so a message
 * can name the expected type, and `strict: false` accepts the extra keywords tool authors and zod write (`title`,
 * `examples`, …). Schemas are not checked against the meta-schema (`validateSchema: false`, `meta: false`), which
 * would compile the whole 2020-12 meta-schema on first use: parameter schemas are checked by
 * `checkParameterSchemas`, and what is left (a keyword of the wrong shape) still fails to compile.
 */
export function sharedAjv(): Ajv2020 {
  if (!shared) {
    const ajv = require("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
    // `code.source` keeps what standalone code needs; the date and other formats are reached the same way.
    shared = new ajv.Ajv2020({ ...OPTIONS, code: { source: true, formats: ajv._`require("ajv-formats/dist/formats").fullFormats` } });
    // ajv-formats is CommonJS: its export is the plugin, with the plugin again as `default`.
    (require("ajv-formats") as typeof import("ajv-formats")).default(shared);
  }
  return shared;
}

/**
 * A validator for `schema` on the shared Ajv, kept on disk (when `useValidatorCache` named a folder) as the code
 * ajv generates for it (standalone mode), keyed by the schema, ajv's version and the options: the next run of the
 * same tool loads that code and never loads ajv's compiler, which costs more than the rest of a tool round. A
 * schema with an `$id` is compiled each time (ajv keeps schemas by id); a cache that cannot be read or written is
 * skipped.
 */
export function compileWithCache(schema: Record<string, unknown>): ValidateFunction {
  if (!cacheChecked) {
    // Generated code is only taken from a folder no one else can write to (see privateFolder).
    cacheChecked = true;
    cacheFolder = privateFolder(cacheFolder);
  }
  if (typeof schema.$id === "string" || cacheFolder === undefined) return sharedAjv().compile(schema);
  const known = bySchema.get(schema);
  if (known) return known;
  const file = cacheFile(schema, cacheFolder);
  let validate = file === undefined ? undefined : (loaded.get(file) ?? loadCached(file));
  if (!validate) {
    const ajv = sharedAjv();
    validate = ajv.compile(schema);
    if (file !== undefined) store(file, ajv, validate);
  }
  if (file !== undefined) loaded.set(file, validate);
  bySchema.set(schema, validate);
  return validate;
}

/**
 * Validators already made in this process, by schema object and by cache file: a tool's copies (one per run of a
 * batch item, each with its own schema objects or the same ones) get the one validator, without reading and
 * evaluating its file again. Both stay small: one entry per distinct schema a process meets.
 */
const bySchema = new WeakMap<object, ValidateFunction>();
const loaded = new Map<string, ValidateFunction>();

function cacheFile(schema: Record<string, unknown>, folder: string): string | undefined {
  let json: string;
  try {
    json = JSON.stringify(schema);
  } catch {
    return undefined; // not plain JSON (a cycle): compile without the cache
  }
  const version = (require("ajv/package.json") as { version: string }).version;
  const key = createHash("sha256").update(JSON.stringify([version, OPTIONS, json])).digest("hex").slice(0, 40);
  return path.join(folder, `${key}.cjs`);
}

function loadCached(file: string): ValidateFunction | undefined {
  let code: string;
  try {
    code = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  try {
    // Evaluated with lllm's own require, so that its `require("ajv/dist/runtime/…")` resolve from lllm's folder.
    const module = { exports: {} as unknown };
    new Function("require", "module", "exports", code)(require, module, module.exports);
    return typeof module.exports === "function" ? (module.exports as ValidateFunction) : undefined;
  } catch {
    return undefined;
  }
}

function store(file: string, ajv: Ajv2020, validate: ValidateFunction): void {
  try {
    const standaloneCode = (require("ajv/dist/standalone/index.js") as typeof import("ajv/dist/standalone/index.js")).default;
    const code = standaloneCode(ajv, validate);
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    // Written whole, then renamed: a concurrent run reads the old state or the new file, never half of it.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, code, { mode: 0o600 });
    renameSync(partial, file);
  } catch {
    // No cache this time: the validator compiled in memory works the same.
  }
}
