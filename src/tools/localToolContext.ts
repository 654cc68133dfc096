import { ToolError } from "../errors.js";
import { inTurn } from "../util/terminalTurn.js";
import { logSeverity } from "./logSeverity.js";
import type { ElicitRequest, ElicitResult, LogLevel, SampleRequest, SampleResult, ToolContext, ToolRunContext } from "./ToolContext.js";

/**
 * The context a tool's `run` receives: what the caller gave, and the local meaning of every capability it did not
 * give (see `ToolRunContext`). Lines go to stderr, where the CLI marks them with the tool's name.
 */
export function completeToolContext(context: ToolContext, toolName: string): ToolRunContext {
  if (context.progress && context.log && context.sample && context.elicit) return context as ToolRunContext;
  return {
    ...context,
    progress: context.progress ?? localProgress,
    log: context.log ?? localLog,
    sample: context.sample ?? ((request) => refuseSampling(toolName, request)),
    elicit: context.elicit ?? ((request) => askOnTerminal(toolName, request, context.signal)),
  };
}

/** `progress 3/10 (30%): message` on stderr. */
function localProgress(done: number, total?: number, message?: string): void {
  const of = total !== undefined && total > 0 ? `/${total} (${Math.round((done / total) * 100)}%)` : "";
  process.stderr.write(`progress ${done}${of}${message ? `: ${message}` : ""}\n`);
}

/** `info: message` on stderr; data as JSON. An unknown level fails, as over MCP. */
function localLog(level: LogLevel, message: unknown): void {
  logSeverity(level);
  const text = typeof message === "string" ? message : (JSON.stringify(message) ?? String(message));
  process.stderr.write(`${level}: ${text}\n`);
}

async function refuseSampling(toolName: string, _request: SampleRequest): Promise<SampleResult> {
  throw new ToolError("tool_sampling_unavailable", `tool ${toolName} asked for a model answer (ctx.sample), but no model is at hand: it was called outside any agent and not from an MCP client`, {
    hint: "Call it from an agent (its model answers), or serve it with `lllm mcp serve` to a client that supports sampling.",
  });
}

async function askOnTerminal(toolName: string, request: ElicitRequest, signal: AbortSignal | undefined): Promise<ElicitResult> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    throw new ToolError("tool_elicitation_unavailable", `tool ${toolName} asked the user a question (ctx.elicit), but there is nobody to ask: stdin is not a terminal`, {
      hint: "Run it from a terminal, or serve it with `lllm mcp serve` to a client that supports elicitation.",
    });
  }
  // The turn among the terminal's questions is taken now, in the order the tools asked; the question's code (and
  // readline) is loaded only when a tool asks. The question names the tool: its text cannot pass for lllm's own.
  return inTurn(async () => {
    const { elicitInTurn } = await import("./elicitOnTerminal.js");
    return elicitInTurn({ ...request, message: `tool \`${toolName}\` asks: ${request.message}` }, { input: process.stdin, output: process.stderr, ...(signal ? { signal } : {}) });
  });
}
