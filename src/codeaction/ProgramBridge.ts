import { createHash } from "node:crypto";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { secrets } from "../util/redact.js";
import { canonicalJson } from "../util/canonicalJson.js";
import { BridgeError, type HostFunction } from "../sandbox/index.js";
import { asToolResult, fileBlocks, FunctionCall, RESULT_FILES, toolResultText, type ContentBlock, type FunctionTool, type ResultFilesSink, type ToolContext } from "../tools/index.js";
import { toolFailureOf } from "../tools/toolFailure.js";
import { isPlainObject } from "../tools/JsonSchema.js";
import { guardToolCall, type ApprovalPolicy } from "../approval/index.js";
import type { ToolBudget } from "../limits/ToolBudget.js";
import { answerValue } from "./answerValue.js";
import type { ArtifactRecord, ArtifactStore } from "./ArtifactStore.js";
import type { BridgedCallRecord, BridgedCallStatus } from "./CodeActionReport.js";
import { resolveArtifacts } from "./resolveArtifacts.js";
import type { SideEffectLedger } from "./SideEffectLedger.js";
import type { HandleInfo, ProgramErrorType, ProgramFile, ToolEnvelope } from "./ToolEnvelope.js";

/** Results larger than this many bytes (as JSON, or as UTF-8 text) reach the program as a handle. */
export const DEFAULT_REFERENCE_THRESHOLD = 4096;

export interface ProgramBridgeOptions {
  /** The tools the program may call, by name. */
  tools: readonly FunctionTool[];
  /** Calls allowed to run; the next one raises ToolBudgetExceeded, and so does every later one. */
  maxToolCalls: number;
  approval: ApprovalPolicy;
  artifacts: ArtifactStore;
  /** Side-effect calls of the run's earlier programs (code-action repairs); absent for a single program. */
  ledger?: SideEffectLedger | undefined;
  /** Default 4096 bytes. */
  referenceThreshold?: number | undefined;
  context: ToolContext;
  /** Told once, at the first call the cap refuses: the moment the program became incomplete. */
  onBudgetReached?: (() => void) | undefined;
  /** The run's budget: every call that runs counts in it, and a limit it reaches stops the run. */
  budget?: ToolBudget | undefined;
  /** The agent whose program this is, for the budget's attribution and the approval question. */
  agent?: string | undefined;
}

/** A bridged call as it started: when, which tool, and the digest of its arguments ("" until they resolve). */
interface CallStart {
  started: number;
  tool: string;
  digest: string;
}

/**
 * The host end of one program's tool calls (seed 002): every call is counted, checked (name, arguments,
 * approval), run as the agent loop would run it (`FunctionTool.call`), and answered with a value, a handle to a
 * large value, or an error the program raises. The budget is hard: once `maxToolCalls` calls were made, every
 * later call raises ToolBudgetExceeded without running, and `budgetExceeded` tells the runner to discard the
 * program's output even if it caught the error.
 */
export class ProgramBridge {
  /** Every bridged call, in the order they were made. */
  readonly calls: BridgedCallRecord[] = [];
  /** The program reached the cap. */
  budgetExceeded = false;
  /** What the program passed to final_answer, if it did (artifacts resolved). */
  finalAnswer: { value: unknown } | undefined;
  readonly #tools = new Map<string, FunctionTool>();
  #count = 0;

  constructor(private readonly options: ProgramBridgeOptions) {
    // The tools as given, not copies: a tool wrapped to be journaled (a resumed run) must keep its own `call`.
    for (const tool of options.tools) this.#tools.set(tool.name, tool);
  }

  /** Calls that ran (everything but the budget-refused). */
  get toolCalls(): number {
    return this.calls.filter((call) => call.status !== "budget_exceeded").length;
  }

  /** The host functions the prelude calls, for `PythonKernel.start({ hostFunctions })`. */
  hostFunctions(): Record<string, HostFunction> {
    const { artifacts } = this.options;
    const find = (args: unknown): ArtifactRecord => {
      const record = artifacts.get(isPlainObject(args) ? args.ref : undefined);
      if (!record) throw new BridgeError("KeyError", `no artifact ${JSON.stringify(isPlainObject(args) ? args.ref : args)} in this run`);
      return record;
    };
    return {
      lllm_tool: (args) => this.#call(args),
      lllm_artifact_load: (args) => artifacts.load(find(args)),
      lllm_artifact_bytes: (args) => {
        const record = find(args);
        return { data: artifacts.bytes(record).toString("base64"), extension: artifacts.extension(record) };
      },
      lllm_artifact_put: (args) => {
        const { name, mime, data } = isPlainObject(args) ? args : {};
        if (typeof data !== "string") throw new BridgeError("TypeError", "artifacts.put needs the file's content");
        const record = artifacts.putBytes(Buffer.from(data, "base64"), { mime: typeof mime === "string" ? mime : "application/octet-stream", source: "artifacts.put", ...(typeof name === "string" ? { name } : {}) });
        return handleOf(record, artifacts);
      },
      lllm_final_answer: (args) => {
        const value = isPlainObject(args) ? args.value : undefined;
        this.finalAnswer = { value: answerValue(value ?? null, artifacts) };
        return null;
      },
    };
  }

  async #call(request: unknown): Promise<ToolEnvelope> {
    const started = performance.now();
    const { name, args } = isPlainObject(request) ? request : { name: undefined, args: undefined };
    const toolName = typeof name === "string" ? name : String(name);
    // What the call's record says besides how it ended; the digest is known once the arguments are.
    const call: CallStart = { started, tool: toolName, digest: "" };
    this.#count += 1;
    if (this.#count > this.options.maxToolCalls) {
      if (!this.budgetExceeded) this.options.onBudgetReached?.();
      this.budgetExceeded = true;
      // The cap's value is never given, so that the model cannot fit the data to it (seed 002).
      return this.#finish(call, "budget_exceeded", fail("ToolBudgetExceeded", "CALL_CAP", `this program reached its cap on function calls, so ${toolName}() was not called. Let the error raise; do not catch it.`));
    }
    const tool = this.#tools.get(toolName);
    if (!tool) {
      const known = [...this.#tools.keys()].sort().join(", ") || "none";
      return this.#finish(call, "unknown_tool", fail("ToolError", "UNKNOWN_TOOL", `there is no function named ${toolName}; the functions are: ${known}`));
    }
    let resolved: Record<string, unknown>;
    try {
      if (args !== undefined && args !== null && !isPlainObject(args)) throw new Error(`the arguments of ${toolName} must be keyword arguments`);
      resolved = resolveArtifacts(args ?? {}, this.options.artifacts) as Record<string, unknown>;
    } catch (error) {
      return this.#finish(call, "error", fail("ToolError", "INVALID_ARGUMENTS", (error as Error).message));
    }
    const digest = argumentsDigest(toolName, resolved);
    call.digest = digest;
    const key = `${toolName}\0${digest}`;
    const ledger = tool.sideEffects ? this.options.ledger : undefined;
    const recorded = ledger?.replay(key);
    if (recorded) return this.#finish(call, "replayed", recorded);
    // A limit of the run reached in the budget's check stops the whole run (the budget aborts its signal, which
    // kills the program).
    const guarded = await guardToolCall({
      tool: toolName,
      arguments: resolved,
      needsApproval: tool.approval === "required",
      approve: this.options.approval,
      agent: this.options.agent,
      budget: this.options.budget,
      signal: this.options.context.signal,
      started,
      run: () => this.#run(tool, resolved, digest),
      failed: (envelope) => !envelope.ok,
    });
    if (guarded.refused) return this.#finish(call, "denied", fail("ToolApprovalDenied", "APPROVAL_DENIED", `${toolName} needs approval, and the call was refused; it did not run`));
    const envelope = guarded.result;
    ledger?.record(key, envelope);
    return this.#finish(call, envelope.ok ? "ok" : "error", envelope);
  }

  async #run(tool: FunctionTool, args: Record<string, unknown>, digest: string): Promise<ToolEnvelope> {
    // The files an MCP tool hands over beside its value (see RESULT_FILES).
    const handed: ContentBlock[] = [];
    const sink: ResultFilesSink = (files) => void handed.push(...files);
    const context = { ...this.options.context, [RESULT_FILES]: sink } as ToolContext;
    // The id is the call's content: a run's journal keys a program's calls by it (a program run again after a stop
    // makes the same calls in the same order, and is answered from the journal).
    const call = await tool.call(new FunctionCall({ id: `program_${digest}`, name: tool.name, arguments: args }), context);
    if (call.error !== undefined) {
      const thrown = toolFailureOf(call)?.error;
      if (isMcpToolError(thrown)) return fail("MCPToolError", thrown.mcpCode, thrown.mcpMessage);
      return fail("ToolError", call.error.startsWith(`Invalid arguments for ${tool.name}:`) ? "INVALID_ARGUMENTS" : "TOOL_FAILED", call.error);
    }
    // A rich result (toolResult(), MCP's shape) is seed 001's: its data, else its text, is the value, and its other
    // blocks are the files.
    const rich = asToolResult(call.result);
    // The program is the model's code, and what it prints the model reads: a result's data holds no key lllm knows
    // of, as a tool result the model reads does not (see FunctionTool).
    const value = secrets.redactKnownValue(rich ? (rich.structuredContent ?? toolResultText(rich)) : call.result);
    return this.#answer(tool.name, value, [...(rich ? fileBlocks(rich) : []), ...handed]);
  }

  /** A value, or a handle when it is larger than the threshold (the data stays in the store); and its files. */
  #answer(toolName: string, result: unknown, blocks: readonly ContentBlock[]): ToolEnvelope {
    const { artifacts } = this.options;
    const files = blocks.map((block) => this.#file(toolName, block));
    const withFiles = files.length > 0 ? { files } : {};
    const { value, size } = jsonValue(result);
    if (size <= (this.options.referenceThreshold ?? DEFAULT_REFERENCE_THRESHOLD)) return { ok: true, value, ...withFiles };
    const record = artifacts.putValue(value, toolName);
    return { ok: true, handle: handleOf(record, artifacts), ...withFiles };
  }

  /**
   * A file of a result, for the program: its bytes stored as an artifact (they never pass through the program
   * unless it asks, and an answer that names the file keeps the reference); a resource link as it is.
   */
  #file(toolName: string, block: ContentBlock): ProgramFile {
    const { artifacts } = this.options;
    const store = (data: Buffer, mime: string, name?: string): ProgramFile => handleOf(artifacts.putBytes(data, { mime, source: toolName, ...(name ? { name } : {}) }), artifacts);
    switch (block.type) {
      case "image":
      case "audio":
        return store(Buffer.from(block.data, "base64"), block.mimeType);
      case "resource": {
        const { resource } = block;
        const name = path.posix.basename(resource.uri.replace(/[?#].*$/, ""));
        if ("text" in resource) return store(Buffer.from(resource.text, "utf8"), resource.mimeType ?? "text/plain", name);
        return store(Buffer.from(resource.blob, "base64"), resource.mimeType ?? "application/octet-stream", name);
      }
      case "resource_link":
        return block;
      case "text":
        return store(Buffer.from(block.text, "utf8"), "text/plain");
    }
  }

  #finish(call: CallStart, status: BridgedCallStatus, envelope: ToolEnvelope): ToolEnvelope {
    const record: BridgedCallRecord = { tool: call.tool, argumentsDigest: call.digest, status, durationMs: Math.round((performance.now() - call.started) * 100) / 100 };
    if (!envelope.ok) record.error = envelope.error.message;
    this.calls.push(record);
    return envelope;
  }
}

/** What the program's handle of an artifact is made from. */
function handleOf(record: ArtifactRecord, artifacts: ArtifactStore): HandleInfo {
  return { ref: record.ref, size: record.size, mime: record.mime, text: artifacts.preview(record) };
}

/** SHA-256 of the tool and its arguments (keys sorted), first 16 hex digits. */
export function argumentsDigest(tool: string, args: unknown): string {
  return createHash("sha256").update(tool).update("\0").update(canonicalJson(args)).digest("hex").slice(0, 16);
}

/**
 * An error the program raises: `<code>: <message>` as its text (`str(e)`), the budget's without a code. An MCP
 * error's text is seed 002's `MCPToolError: NOT_FOUND: …`, which its traceback shows after `RuntimeError: `.
 */
function fail(type: ProgramErrorType, code: string, message: string): ToolEnvelope {
  const text = type === "ToolBudgetExceeded" ? message : type === "MCPToolError" ? `MCPToolError: ${code}: ${message}` : `${code}: ${message}`;
  return { ok: false, error: { type, code, message: text } };
}

/** An McpToolError from any copy of the module: recognised by its typed fields. */
function isMcpToolError(value: unknown): value is { mcpCode: string; mcpMessage: string } {
  return typeof value === "object" && value !== null && typeof (value as { mcpCode?: unknown }).mcpCode === "string" && typeof (value as { mcpMessage?: unknown }).mcpMessage === "string";
}

/** The result as JSON data (what the bridge can carry) and its size in bytes; text that is not JSON stays text. */
function jsonValue(result: unknown): { value: unknown; size: number } {
  if (typeof result === "string") return { value: result, size: Buffer.byteLength(result, "utf8") };
  if (result === undefined) return { value: null, size: 4 };
  try {
    const text = JSON.stringify(result);
    if (text === undefined) return { value: null, size: 4 };
    return { value: JSON.parse(text) as unknown, size: Buffer.byteLength(text, "utf8") };
  } catch {
    // A BigInt or a cycle: the program gets what the model would have read.
    const text = String(result);
    return { value: text, size: Buffer.byteLength(text, "utf8") };
  }
}
