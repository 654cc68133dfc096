// Types of validators.js, which scripts/build-validators.js generates (ajv standalone code) at build time.
import type { ValidateFunction } from "ajv";

/** Tactic files (schemas/tactic.schema.json). */
export declare const tactic: ValidateFunction;
/** Package manifests (schemas/package.schema.json). */
export declare const manifest: ValidateFunction;
/** Proxy definitions as YAML files write them (snake_case keys). */
export declare const proxyYaml: ValidateFunction;
/** Proxy definitions as `proxy({...})` writes them (camelCase keys). */
export declare const proxyCode: ValidateFunction;
/** Project settings (.lllmrc, package.json#lllm, …). */
export declare const settings: ValidateFunction;
