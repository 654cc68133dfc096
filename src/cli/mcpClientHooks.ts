import type { ElicitationRequest, McpClientHooks } from "../mcp/McpClientHooks.js";
import { openBrowser } from "../mcp/oauth/openBrowser.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import { inTurn } from "../util/terminalTurn.js";
import { writeErr } from "./output.js";
import type { JsonSchema } from "../tools/JsonSchema.js";
import type { ElicitResult } from "../tools/ToolContext.js";

/** At most this much of a server's log or progress message is shown. */
const SHOWN_CHARACTERS = 1000;

/**
 * Without --verbose, a server's error messages shown at most this many times: past that, one line says more came. A
 * server may send thousands (one per item of a failing loop), which would bury lllm's own lines.
 */
const SHOWN_ERRORS = 100;

/** A tool call's progress shown at most once in this many milliseconds (and its last step, progress = total). */
const PROGRESS_EVERY_MS = 1000;

/** How long a browser sign-in may take before the run gives up on it. */
const SIGN_IN_TIMEOUT_MS = 5 * 60_000;

/**
 * The CLI's answers to what MCP servers ask: questions on the terminal (declined without one), progress on stderr,
 * server log messages on stderr with --verbose, and an OAuth sign-in in the browser when there is a terminal or a
 * `$BROWSER` (without either, a run uses stored tokens or a machine client and says what to do otherwise).
 */
export function mcpClientHooks(options: {
  verbose: boolean;
  signal?: AbortSignal | undefined;
  env?: NodeJS.ProcessEnv;
  /** Where questions are asked; default stdin and stderr when both are a terminal (else questions are declined). */
  terminal?: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream } | undefined;
  /** `false`: never ask a server's question on the terminal (`lllm chat`, whose prompt has the keyboard): decline it. */
  ask?: boolean;
}): McpClientHooks {
  const env = options.env ?? process.env;
  const terminal = options.terminal ?? (process.stdin.isTTY && process.stderr.isTTY ? { input: process.stdin, output: process.stderr } : undefined);
  // A server's text on one line (a line break in it could forge a line of lllm's own), and short: a server may send
  // megabytes in one log or progress message, which would flood the terminal.
  // Cut before escaping (never inside an escape), and not between an emoji's two halves.
  const clean = (text: string): string => escapeControlCharacters(text.length > SHOWN_CHARACTERS ? `${text.slice(0, SHOWN_CHARACTERS).replace(/[\ud800-\udbff]$/, "")}… (${text.length} characters)` : text, { all: true });
  const errorsShown = new Map<string, number>();
  const progressShown = new Map<string, number>();
  return {
    ...(options.signal ? { signal: options.signal } : {}),
    // Without the hook a question is declined (installClientHandlers).
    ...(terminal && options.ask !== false ? { elicit: (request: ElicitationRequest) => askOnTerminal(request, terminal, options.signal) } : {}),
    onProgress: ({ server, tool, progress, total, message }) => {
      const key = `${server}\u0000${tool}`;
      const now = performance.now();
      const last = progressShown.get(key);
      if (last !== undefined && now - last < PROGRESS_EVERY_MS && progress !== total) return;
      progressShown.set(key, now);
      writeErr(`lllm: ${clean(server)}.${clean(tool)}: ${total !== undefined ? `${progress}/${total}` : String(progress)}${message ? ` ${clean(message)}` : ""}`);
    },
    onLog: ({ server, level, logger, data }) => {
      if (!options.verbose && level !== "error" && level !== "critical" && level !== "alert" && level !== "emergency") return;
      if (!options.verbose) {
        const shown = (errorsShown.get(server) ?? 0) + 1;
        errorsShown.set(server, shown);
        if (shown > SHOWN_ERRORS + 1) return;
        if (shown === SHOWN_ERRORS + 1) return writeErr(`lllm: ${clean(server)} sent more than ${SHOWN_ERRORS} error messages; the rest are not shown (--verbose shows every message)`);
      }
      writeErr(`lllm: ${clean(server)}${logger ? `/${clean(logger)}` : ""} [${level}] ${clean(typeof data === "string" ? data : JSON.stringify(data))}`);
    },
    ...(terminal !== undefined || env.BROWSER ? { signIn: { open: (url: string) => openBrowser(url, { env, write: writeErr }), timeoutMs: SIGN_IN_TIMEOUT_MS, signal: options.signal } } : {}),
  };
}

/**
 * Ask a server's question on the terminal, as a tool's `ctx.elicit` does (`elicitOnTerminal`: numbered choices,
 * defaults, answers asked again, `!decline`, Ctrl-D or a stop cancels), naming the server that asks, in its turn
 * among the terminal's questions. Loaded on the first question.
 */
function askOnTerminal(request: ElicitationRequest, terminal: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream }, signal: AbortSignal | undefined): Promise<ElicitResult> {
  // The turn among the terminal's questions (approvals, tools' questions) is taken as the server asks.
  return inTurn(async () => {
    const { elicitInTurn } = await import("../tools/elicitOnTerminal.js");
    const requestedSchema = { ...request.schema, type: "object" as const, properties: request.schema.properties as Record<string, JsonSchema> };
    return elicitInTurn({ message: `MCP server \`${request.server}\` asks: ${request.message}`, requestedSchema }, { ...terminal, ...(signal ? { signal } : {}) });
  });
}
