import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { LllmError } from "../../errors.js";
import { parseRef, type Registry } from "../../registry/index.js";
import { prepareTactic, type PreparedTactic } from "../../tactics/prepareTactic.js";
import { isPlainObject } from "../../util/isPlainObject.js";
import type { BatchAnnouncement } from "./queueConnection.js";
import { contentDigest, queueDigest } from "./queueDigest.js";
import { unsendableParts } from "./unsendableParts.js";

/**
 * Why a worker does not run a batch or a served tactic: the message goes to the worker's stderr and, through Redis,
 * to the producer (`lllm batch`) or the servers (`lllm serve --queue`).
 */
export class Refusal extends Error {}

/** What asks a worker to run a tactic: a batch, or servers (an announcement of `lllm serve --queue` says `serving`). */
type Asker = "batch" | "served";

const askerOf = (announcement: BatchAnnouncement): Asker => (announcement.serving !== undefined ? "served" : "batch");
/** The command whose machine has the tactic the worker should have. */
const commandOf = (asker: Asker): string => (asker === "served" ? "`lllm serve`" : "`lllm batch`");

export interface QueuedTacticContext {
  /** The worker's own packages (its `-p` folders, the project settings' packages, `./lllm_packages`, `$LLLM_HOME/packages`). */
  registry: Registry;
  /** The worker's `-p` folders, loaded again with the tactic. */
  packages: string[];
  /** A private folder of the worker where a tactic sent as data is written to be loaded. */
  scratch: () => string;
}

/**
 * Find and prepare, among the worker's own packages only, the tactic a batch (or `lllm serve --queue`) names. Nothing named in Redis is ever
 * loaded: a ref is looked up in the worker's packages and its file's digest compared before the tactic is loaded; a
 * tactic sent as data is checked (no `base`, nothing `unsendableParts` refuses, only packages the worker has) and
 * loaded with the worker's folders of those packages in place of its `packages:`. Last, the resolved configuration
 * must have the announced digest. Throws a `Refusal` that says what to do, in the words of who asks (`askerOf`).
 */
export async function prepareQueuedTactic(announcement: BatchAnnouncement, context: QueuedTacticContext): Promise<PreparedTactic> {
  const { queued } = announcement;
  const file = queued.kind === "ref" ? ownTacticFile(announcement, queued, context.registry) : writeDataTactic(announcement, queued, context);
  let prepared: PreparedTactic;
  try {
    prepared = await prepareTactic(file, { packages: context.packages, ...(announcement.model !== null ? { model: announcement.model } : {}) });
  } catch (error) {
    const missing = announcement.packages.filter((pkg) => !context.registry.packages.has(pkg.name));
    const why = packageRelative(error instanceof LllmError ? error.message : String(error), { registry: context.registry, ...(queued.kind === "data" ? { written: file } : {}), tactic: announcement.tactic });
    throw new Refusal(`this worker cannot load the tactic \`${announcement.tactic}\`: ${why}${missing.length > 0 ? `\n  ${startWith(missing)}` : ""}`);
  }
  if (queueDigest(prepared) !== announcement.digest) {
    // The worker's own digest stays here: written to Redis, it would tell anyone there what to announce.
    const asker = askerOf(announcement);
    throw new Refusal(`${asker === "served" ? "the served" : "its"} tactic \`${announcement.tactic}\` differs from this worker's copy (its configuration, prompts or packages); give every worker the same tactic and packages as the machine that runs ${commandOf(asker)}`);
  }
  return prepared;
}

function ownTacticFile(announcement: BatchAnnouncement, queued: Extract<BatchAnnouncement["queued"], { kind: "ref" }>, registry: Registry): string {
  const asker = askerOf(announcement);
  if (announcement.model?.startsWith("scripted:")) throw new Refusal(`it names a scripted model (\`--model scripted:FILE\`): a file on the worker is not the ${asker === "served" ? "server" : "batch"}'s to choose`);
  const ref = parseRef(queued.ref);
  if (!ref?.package || ref.section !== "tactics") throw new Refusal(`its tactic ref \`${queued.ref}\` is not a \`package.tactics:name\` ref`);
  const pkg = registry.packages.get(ref.package);
  if (!pkg) {
    const from = announcement.packages.find((item) => item.name === ref.package);
    const runs = asker === "served" ? `the served tactic \`${announcement.tactic}\` is \`${queued.ref}\`` : `the batch runs \`${queued.ref}\``;
    throw new Refusal(`this worker has no package \`${ref.package}\` (${runs})\n  ${startWith([from ?? { name: ref.package, version: null }])}`);
  }
  const entry = pkg.entries("tactics").get(ref.key);
  const version = announcement.packages.find((item) => item.name === pkg.name)?.version;
  const same = `give the worker the same version of package \`${pkg.name}\`${version ? ` (${version})` : ""} as the machine that runs ${commandOf(asker)}`;
  if (!entry) throw new Refusal(`this worker's copy of package \`${pkg.name}\`${pkg.manifest.version ? ` (${pkg.manifest.version})` : ""} has no tactic \`${ref.key}\`: ${same}`);
  if (contentDigest(readFileSync(entry.file)) !== queued.contentDigest) {
    const tactic = asker === "served" ? `the served tactic \`${announcement.tactic}\` (\`${queued.ref}\`)` : `its tactic \`${queued.ref}\``;
    throw new Refusal(`${tactic} differs from this worker's copy (${inPackage(pkg.dir, pkg.name, entry.file)}); ${same}`);
  }
  return entry.file;
}

function writeDataTactic(announcement: BatchAnnouncement, queued: Extract<BatchAnnouncement["queued"], { kind: "data" }>, context: QueuedTacticContext): string {
  const { data } = queued;
  if ("base" in data) throw new Refusal("its tactic, sent as data, names a `base` file: only a tactic in one of the worker's packages may");
  const parts = unsendableParts(data, announcement.model);
  if (parts.length > 0) throw new Refusal(`its tactic, sent as data (it is in no package), sets what a worker takes only from its own packages: ${parts.join("; ")}; move it into a package the workers have (lllm worker -p DIR)`);
  const missing = queued.packageNames.filter((name) => !context.registry.packages.has(name));
  if (missing.length > 0) {
    throw new Refusal(`its tactic uses package${missing.length === 1 ? "" : "s"} this worker does not have: ${missing.map((name) => `\`${name}\``).join(", ")}\n  ${startWith(missing.map((name) => announcement.packages.find((item) => item.name === name) ?? { name, version: null }))}`);
  }
  const packages = queued.packageNames.map((name) => context.registry.packages.get(name)!.dir);
  const file = path.join(context.scratch(), `${announcement.batchId.replace(/[^A-Za-z0-9_-]/g, "_")}.json`);
  writeFileSync(file, JSON.stringify({ ...data, packages }), { mode: 0o600 });
  return file;
}

/** How to start a worker that has these packages (by name and version: the folders of another machine mean nothing here). */
function startWith(packages: Array<{ name: string; version: string | null }>): string {
  const list = packages.map((pkg) => `\`${pkg.name}\`${pkg.version ? ` ${pkg.version}` : ""}`).join(", ");
  return `Start the worker with a copy of ${list}: lllm worker --queue URL -p DIR (DIR: the package's folder, with its manifest)`;
}

/** `kit/tactics/echo.yaml`: a file of a package, named from the package (not where this worker keeps it). */
function inPackage(dir: string, name: string, file: string): string {
  const relative = path.relative(dir, file);
  return relative.startsWith("..") || path.isAbsolute(relative) ? path.basename(file) : `${name}/${relative.split(path.sep).join("/")}`;
}

/**
 * A worker's error text with its paths named from their packages (`kit/tools/add.mjs`, `kit`), and the file it wrote
 * for a tactic sent as data (`written`) named as the batch names the tactic (without a line and column of that file,
 * which are not the user's): the text goes to the machine that runs `lllm batch`, where this worker's folders mean
 * nothing.
 */
function packageRelative(text: string, context: { registry: Registry; written?: string; tactic: string }): string {
  let result = context.written ? text.replace(new RegExp(`${escapeRegExp(context.written)}(:\\d+){0,2}`, "g"), context.tactic) : text;
  // The deepest folders first: a package inside another's folder is named from its own.
  const packages = [...context.registry.list()].sort((a, b) => b.dir.length - a.dir.length);
  for (const pkg of packages) result = result.split(pkg.dir).join(pkg.name);
  return result;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The announcement as read from Redis (a batch's, or a served tactic's): anything else is refused, not half-used. */
export function readAnnouncement(text: string, asker: Asker = "batch"): BatchAnnouncement {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Refusal("its announcement is not JSON");
  }
  const unknownShape = (): Refusal => new Refusal(`its announcement is not one this worker understands: give the workers the same lllm version as the machine that runs ${commandOf(asker)}`);
  if (!isPlainObject(value) || !isPlainObject(value.queued) || !Array.isArray(value.packages) || typeof value.digest !== "string" || typeof value.tactic !== "string" || typeof value.batchId !== "string") throw unknownShape();
  const queued = value.queued;
  const strings = (list: unknown): boolean => Array.isArray(list) && list.every((item) => typeof item === "string");
  const validQueued = (queued.kind === "ref" && typeof queued.ref === "string" && typeof queued.contentDigest === "string") || (queued.kind === "data" && typeof queued.file === "string" && isPlainObject(queued.data) && strings(queued.packageNames));
  if (!validQueued) throw unknownShape();
  if (!value.packages.every((item) => isPlainObject(item) && typeof item.name === "string" && (item.version === null || typeof item.version === "string"))) throw unknownShape();
  if ((value.model !== null && typeof value.model !== "string") || !isPlainObject(value.vars) || !Object.values(value.vars).every((item) => typeof item === "string")) throw unknownShape();
  if ((value.maxSteps !== null && typeof value.maxSteps !== "number") || (value.timeout !== null && typeof value.timeout !== "number") || (value.approve !== "all" && value.approve !== "none")) throw unknownShape();
  return value as unknown as BatchAnnouncement;
}
