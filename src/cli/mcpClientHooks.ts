import { createInterface } from "node:readline/promises";
import type { ElicitationRequest, McpClientHooks } from "../mcp/McpClientHooks.js";
import { openBrowser } from "../mcp/oauth/openBrowser.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import { writeErr } from "./output.js";

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
  /** `false`: never ask a server's question on the terminal (`lllm chat`, whose prompt has the keyboard): decline it. */
  ask?: boolean;
}): McpClientHooks {
  const env = options.env ?? process.env;
  const terminal = Boolean(process.stdin.isTTY && process.stderr.isTTY);
  const clean = (text: string): string => escapeControlCharacters(text, { all: true });
  return {
    // Without the hook a question is declined (installClientHandlers).
    ...(terminal && options.ask !== false ? { elicit: (request: ElicitationRequest) => askOnTerminal(request) } : {}),
    onProgress: ({ server, tool, progress, total, message }) => {
      writeErr(`lllm: ${clean(server)}.${clean(tool)}: ${total !== undefined ? `${progress}/${total}` : String(progress)}${message ? ` ${clean(message)}` : ""}`);
    },
    onLog: ({ server, level, logger, data }) => {
      if (!options.verbose && level !== "error" && level !== "critical" && level !== "alert" && level !== "emergency") return;
      writeErr(`lllm: ${clean(server)}${logger ? `/${clean(logger)}` : ""} [${level}] ${clean(typeof data === "string" ? data : JSON.stringify(data))}`);
    },
    ...(terminal || env.BROWSER ? { signIn: { open: (url: string) => openBrowser(url, { env, write: writeErr }), timeoutMs: SIGN_IN_TIMEOUT_MS, signal: options.signal } } : {}),
  };
}

/**
 * Ask a server's question on the terminal, field by field. An empty answer leaves a field out (the schema's default
 * applies); `n` at the first prompt declines, `c` cancels. Choices are listed; yes/no fields take y or n.
 */
async function askOnTerminal(request: ElicitationRequest): Promise<{ action: "accept" | "decline" | "cancel"; content?: Record<string, string | number | boolean | string[]> }> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  const clean = (text: string): string => escapeControlCharacters(text, { all: true });
  try {
    writeErr(`MCP server \`${clean(request.server)}\` asks: ${clean(request.message)}`);
    const first = (await prompt.question("Answer? [Y]es / [n]o / [c]ancel: ")).trim().toLowerCase();
    if (first.startsWith("n")) return { action: "decline" };
    if (first.startsWith("c")) return { action: "cancel" };
    const content: Record<string, string | number | boolean | string[]> = {};
    const required = new Set(request.schema.required ?? []);
    for (const [name, field] of Object.entries(request.schema.properties)) {
      const spec = field as { type?: string; title?: string; description?: string; enum?: unknown[]; oneOf?: Array<{ const: string; title?: string }>; default?: unknown };
      const choices = spec.enum?.map(String) ?? spec.oneOf?.map((option) => option.const);
      const hint = [spec.description, choices ? `one of ${choices.join(", ")}` : spec.type === "boolean" ? "y/n" : undefined, spec.default !== undefined ? `default ${String(spec.default)}` : undefined].filter(Boolean).join("; ");
      for (;;) {
        const answer = (await prompt.question(`  ${clean(spec.title ?? name)}${hint ? ` (${clean(hint)})` : ""}: `)).trim();
        if (answer === "") {
          if (required.has(name) && spec.default === undefined) continue;
          break;
        }
        if (spec.type === "boolean") content[name] = /^(y|yes|true)$/i.test(answer);
        else if (spec.type === "number" || spec.type === "integer") {
          const value = Number(answer);
          if (!Number.isFinite(value) || (spec.type === "integer" && !Number.isInteger(value))) continue;
          content[name] = value;
        } else if (choices && !choices.includes(answer)) continue;
        else content[name] = answer;
        break;
      }
    }
    return { action: "accept", content };
  } finally {
    prompt.close();
  }
}
