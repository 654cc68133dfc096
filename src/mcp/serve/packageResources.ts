import { constants, existsSync, lstatSync, readdirSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import type { ResourceContents } from "../../tools/ContentBlock.js";
import { toResourceDefinition, type ResourceDefinition, type ResourceReadResult } from "../../packageApi/resource.js";
import type { Package } from "../../registry/Package.js";
import { importModule } from "../../registry/importModule.js";
import type { ProxyDefinition } from "../../proxies/ProxyDefinition.js";
import { formatApiDocs } from "../../proxies/formatApiDocs.js";
import { isCodeFile } from "../../util/codeFile.js";
import { sdkServer } from "./sdkServer.js";
import { isTextType, mimeTypeOf } from "./mimeTypeOf.js";

/** A resource at a fixed URI. */
export interface ServedResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** The file it is read from, when it is one (subscriptions watch it). */
  file?: string;
  read(): Promise<ResourceContents[]>;
}

/** Resources named by a URI template. */
export interface ServedTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** The template's variables in `uri`, or undefined when it does not match. */
  match(uri: string): Record<string, string> | undefined;
  read(uri: string, variables: Record<string, string>): Promise<ResourceContents[]>;
  /** The completions of a variable's value. */
  complete(variable: string, value: string): Promise<string[]>;
}

/** The most files of `docs/` (and `resources/`) served, so that a huge folder does not flood a client's list. */
const MAX_DOCUMENTS = 1000;

/**
 * A package's resources: its documents (the `README.md`, every file under `docs/`, and the data files of
 * `resources/`, at `lllm://<package>/<path>`), its proxies' API docs (`lllm://<package>/proxies/<name>`, what
 * `query_api_doc` returns), and the resources its `resources/*.ts` files define with `resource()` and
 * `resourceTemplate()`. A code file that fails to load, or defines nothing, is left out with the reason.
 */
export async function packageResources(pkg: Package, proxies: readonly ProxyDefinition[]): Promise<{ resources: ServedResource[]; templates: ServedTemplate[]; skipped: Array<{ file: string; reason: string }> }> {
  const resources: ServedResource[] = [];
  const templates: ServedTemplate[] = [];
  const skipped: Array<{ file: string; reason: string }> = [];
  // Regular files only, as in docs/ and resources/: a symlink (README.md -> ~/.ssh/id_rsa) would serve whatever
  // it points to, outside the package, to every client.
  const readme = path.join(pkg.dir, "README.md");
  const documents = [...(isRegularFile(readme) ? [readme] : []), ...listFiles(path.join(pkg.dir, "docs")), ...listFiles(path.join(pkg.dir, "resources")).filter((file) => !isCodeFile(file))];
  for (const file of documents.slice(0, MAX_DOCUMENTS)) resources.push(documentResource(pkg, file));
  for (const definition of proxies) {
    resources.push({
      uri: `lllm://${pkg.name}/proxies/${encodePath(definition.path)}`,
      name: `${definition.path} API docs`,
      // Proxy names usually say "API" already ("Weather API"): "the Weather API API" would not do.
      description: `The documentation of the ${definition.name}${/\bAPI$/i.test(definition.name) ? "" : " API"} (proxy \`${definition.path}\`): its endpoints and their parameters.`,
      mimeType: "text/markdown",
      read: async () => [{ uri: `lllm://${pkg.name}/proxies/${encodePath(definition.path)}`, mimeType: "text/markdown", text: formatApiDocs(definition) }],
    });
  }
  for (const file of listFiles(path.join(pkg.dir, "resources"), false).filter((candidate) => isCodeFile(candidate) && !candidate.endsWith(".d.ts"))) {
    let exports: Record<string, unknown>;
    try {
      exports = await importModule(file);
    } catch (error) {
      skipped.push({ file, reason: `it failed to load: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` });
      continue;
    }
    const definitions = [...new Set(Object.values(exports).flatMap((value) => (Array.isArray(value) ? value : [value])))].map(toResourceDefinition).filter((item): item is ResourceDefinition => item !== undefined);
    if (definitions.length === 0) skipped.push({ file, reason: "it exports no resource() or resourceTemplate()" });
    for (const definition of definitions) {
      if (definition.kind === "resource") resources.push(codeResource(definition));
      else templates.push(codeTemplate(definition));
    }
  }
  return { resources, templates, skipped };
}

function documentResource(pkg: Package, file: string): ServedResource {
  const relative = path.relative(pkg.dir, file).split(path.sep).join("/");
  const uri = `lllm://${pkg.name}/${encodePath(relative)}`;
  const mimeType = mimeTypeOf(file);
  return {
    uri,
    name: relative,
    description: relative === "README.md" ? `The README of package ${pkg.name}` : `${relative} of package ${pkg.name}`,
    mimeType,
    file,
    read: async () => {
      const bytes = await readRegularFile(file);
      return [isTextType(mimeType) ? { uri, mimeType, text: bytes.toString("utf8") } : { uri, mimeType, blob: bytes.toString("base64") }];
    },
  };
}

function codeResource(definition: ResourceDefinition & { kind: "resource" }): ServedResource {
  return {
    uri: definition.uri,
    name: definition.name,
    ...describe(definition),
    read: async () => [contents(definition.uri, await definition.read(), definition.mimeType)],
  };
}

function codeTemplate(definition: ResourceDefinition & { kind: "template" }): ServedTemplate {
  // The SDK's RFC 6570 matcher; the SDK is loaded whenever a package is served.
  const { UriTemplate } = sdkServer();
  const template = new UriTemplate(definition.uriTemplate);
  return {
    uriTemplate: definition.uriTemplate,
    name: definition.name,
    ...describe(definition),
    match: (uri) => {
      const found = template.match(uri);
      return found ? Object.fromEntries(Object.entries(found).map(([key, value]) => [key, Array.isArray(value) ? value.join(",") : value])) : undefined;
    },
    read: async (uri, variables) => [contents(uri, await definition.read(uri, variables), definition.mimeType)],
    complete: async (variable, value) => {
      const complete = definition.complete?.[variable];
      return complete ? (await complete(value)).filter((item) => typeof item === "string") : [];
    },
  };
}

function describe(definition: ResourceDefinition): { title?: string; description?: string; mimeType?: string } {
  return {
    ...(definition.title !== undefined ? { title: definition.title } : {}),
    ...(definition.description !== undefined ? { description: definition.description } : {}),
    ...(definition.mimeType !== undefined ? { mimeType: definition.mimeType } : {}),
  };
}

/** What `read()` returned, as MCP contents: text as text, bytes as base64. */
function contents(uri: string, value: ResourceReadResult, mimeType: string | undefined): ResourceContents {
  const type = (own: string | undefined, fallback: string): { mimeType: string } => ({ mimeType: own ?? mimeType ?? fallback });
  if (typeof value === "string") return { uri, ...type(undefined, "text/plain"), text: value };
  if (value instanceof Uint8Array) return { uri, ...type(undefined, "application/octet-stream"), blob: Buffer.from(value).toString("base64") };
  if (typeof value === "object" && value !== null && "text" in value && typeof value.text === "string") return { uri, ...type(value.mimeType, "text/plain"), text: value.text };
  if (typeof value === "object" && value !== null && "blob" in value) {
    const blob = value.blob instanceof Uint8Array ? Buffer.from(value.blob).toString("base64") : String(value.blob);
    return { uri, ...type(value.mimeType, "application/octet-stream"), blob };
  }
  throw new Error(`resource ${uri}: read() must return text, bytes, {text} or {blob}`);
}

/** Whether `file` is a regular file itself (not a symlink to one). */
function isRegularFile(file: string): boolean {
  try {
    return lstatSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The bytes of a listed document, read without following a symlink: a file replaced by a link after it was listed
 * is refused (ELOOP) rather than read through.
 */
async function readRegularFile(file: string): Promise<Buffer> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Files under `dir` (recursively unless `deep` is false), skipping hidden ones and symlinks, sorted. */
function listFiles(dir: string, deep = true): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (deep) out.push(...listFiles(full));
    } else if (entry.isFile()) {
      out.push(full);
    }
    if (out.length > MAX_DOCUMENTS) break;
  }
  return out;
}

function encodePath(relative: string): string {
  return relative.split("/").map(encodeURIComponent).join("/");
}
