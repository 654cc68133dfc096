import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { lllmHome } from "../config/lllmHome.js";
import { ConfigError } from "../errors.js";
import { newRunId } from "../util/newRunId.js";
import { BridgeError } from "../sandbox/BridgeError.js";

/** One stored artifact, as `--json` lists it. */
export interface ArtifactRecord {
  /** The id programs pass around (`handle.ref`, `{"$artifact": ref}`): derived from the content, so equal data has one ref. */
  ref: string;
  /** The file on the host. */
  path: string;
  /** Bytes. */
  size: number;
  mime: string;
  /** What made it: the tool whose result it is, or `artifacts.put`. */
  source: string;
}

/** The artifacts of a run may take this much together unless `sandbox.workspace_size` says otherwise. */
export const DEFAULT_ARTIFACTS_MB = 256;

/** How much of an artifact a handle's `.text` shows. */
export const PREVIEW_CHARS = 1000;

const EXTENSIONS: Record<string, string> = { "application/json": ".json", "text/plain": ".txt", "text/csv": ".csv", "text/markdown": ".md", "text/html": ".html", "image/png": ".png", "image/jpeg": ".jpg", "image/svg+xml": ".svg", "application/pdf": ".pdf" };

/**
 * The artifacts of one run: large tool results and files programs stored, kept as files in one folder (by
 * default `$LLLM_HOME/runs/<run id>/artifacts/`, made when the first artifact arrives). Values are stored as
 * JSON, text as text, files as their bytes. The host reads them back to resolve `{"$artifact": ref}` arguments,
 * so the data goes from the store to the tool without passing through the sandbox.
 */
export class ArtifactStore {
  readonly #records = new Map<string, ArtifactRecord>();
  /** The folder, or how to name it: a run's folder is named when first needed (most runs store nothing). */
  #folder: string | (() => string);
  readonly #maxBytes: number;
  #storedBytes = 0;

  /**
   * `maxMb`: the most the run's artifacts may take together (default 256, the size of a program's workspace).
   * Artifacts stay after the run (the README promises them under `$LLLM_HOME/runs/`), so their total is capped
   * instead: a program cannot fill the host's disk through `artifacts.put` or a loop of large tool results.
   */
  constructor(folder: string | (() => string), options: { maxMb?: number } = {}) {
    this.#folder = folder;
    this.#maxBytes = Math.floor((options.maxMb ?? DEFAULT_ARTIFACTS_MB) * 1024 * 1024);
  }

  /**
   * A store in the run's folder, `$LLLM_HOME/runs/<run id>/artifacts/`: `runId` is the run store's id of the run (so
   * `lllm logs show ID` and the folder agree); a run that is not recorded gets a new id of the same form, made when
   * the first artifact is stored (most runs store none).
   */
  static forRun(env: NodeJS.ProcessEnv = process.env, options: { maxMb?: number; runId?: string } = {}): ArtifactStore {
    const { runId, ...rest } = options;
    // A folder name, never a path: an id with a separator or `..` would put the files elsewhere.
    if (runId !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(runId)) throw new ConfigError("run_id_invalid", `run id \`${runId}\` is not a folder name: letters, digits, \`_\` and \`-\` only`);
    return new ArtifactStore(() => path.join(lllmHome(env), "runs", runId ?? newRunId(), "artifacts"), rest);
  }

  /** The folder the files go to (it exists only once something was stored). */
  get folder(): string {
    if (typeof this.#folder === "function") this.#folder = this.#folder();
    return this.#folder;
  }

  /** Store a tool's result: text as `text/plain`, anything else as JSON. */
  putValue(value: unknown, source: string): ArtifactRecord {
    if (typeof value === "string") return this.putBytes(Buffer.from(value, "utf8"), { mime: "text/plain", source });
    return this.putBytes(Buffer.from(JSON.stringify(value ?? null), "utf8"), { mime: "application/json", source });
  }

  /** Store bytes (a file a program made). */
  putBytes(data: Buffer, options: { mime: string; source: string; name?: string }): ArtifactRecord {
    const mime = options.mime.trim() || "application/octet-stream";
    const ref = `a${createHash("sha256").update(mime).update("\0").update(data).digest("hex").slice(0, 16)}`;
    const known = this.#records.get(ref);
    if (known) return known;
    if (this.#storedBytes + data.length > this.#maxBytes) {
      const mb = (bytes: number): string => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;
      throw new BridgeError(
        "ArtifactQuotaExceeded",
        `cannot store ${mb(data.length)} more as an artifact: this run's artifacts may take ${mb(this.#maxBytes)} together and hold ${mb(this.#storedBytes)}. Store less (summarise, filter, or reuse an artifact); the limit is \`sandbox: {workspace_size: ...}\` in the tactic.`,
      );
    }
    // Readable by this user alone (whatever the umask): artifacts are tool results and files from a run, as private
    // as its transcript in the run store; the folders above (`$LLLM_HOME/runs/<run id>/`) are made so too.
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    const file = path.join(this.folder, `${ref}${extensionOf(mime, options.name)}`);
    writeFileSync(file, data, { mode: 0o600 });
    const record = { ref, path: file, size: data.length, mime, source: options.source };
    this.#records.set(ref, record);
    this.#storedBytes += data.length;
    return record;
  }

  /** The record of `ref`; only own refs count (the ref comes from model-written code). */
  get(ref: unknown): ArtifactRecord | undefined {
    return typeof ref === "string" ? this.#records.get(ref) : undefined;
  }

  bytes(record: ArtifactRecord): Buffer {
    return readFileSync(record.path);
  }

  /** The value a tool or `handle.load()` gets: JSON decoded, text as a string, other bytes as base64. */
  load(record: ArtifactRecord): unknown {
    const data = this.bytes(record);
    if (record.mime === "application/json") return JSON.parse(data.toString("utf8")) as unknown;
    if (isText(record.mime)) return data.toString("utf8");
    return data.toString("base64");
  }

  /** Whether `load()` gives the artifact's own value (JSON data or text), rather than its bytes as base64. */
  holdsData(record: ArtifactRecord): boolean {
    return record.mime === "application/json" || isText(record.mime);
  }

  /** The start of the artifact as text, for a handle's `.text`. */
  preview(record: ArtifactRecord): string {
    if (!isText(record.mime) && record.mime !== "application/json") return `(${record.size} bytes of ${record.mime})`;
    return this.bytes(record).subarray(0, PREVIEW_CHARS * 4).toString("utf8").slice(0, PREVIEW_CHARS);
  }

  extension(record: ArtifactRecord): string {
    return path.extname(record.path);
  }

  /** Every artifact, in the order stored. */
  list(): ArtifactRecord[] {
    return [...this.#records.values()];
  }
}

function isText(mime: string): boolean {
  return mime.startsWith("text/") || mime === "application/xml" || mime.endsWith("+json") || mime.endsWith("+xml");
}

function extensionOf(mime: string, name: string | undefined): string {
  const own = name ? path.extname(name) : "";
  if (/^\.[A-Za-z0-9]{1,8}$/.test(own)) return own;
  return EXTENSIONS[mime] ?? ".bin";
}
