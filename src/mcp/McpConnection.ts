import path from "node:path";
import { pathToFileURL } from "node:url";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../config/TacticConfig.js";
import { lllmHome } from "../config/lllmHome.js";
import { ConfigError, InterruptedError, LllmError, ToolError } from "../errors.js";
import { createHttpTransport, serverFetch } from "./createHttpTransport.js";
import { createTransport, describeServer, type ServerTransport } from "./createTransport.js";
import type { McpClientHooks } from "./McpClientHooks.js";
import { installClientHandlers } from "./installClientHandlers.js";
import { SignInNeeded } from "./oauth/LllmOAuthProvider.js";
import { OAuthFlowError, OAuthNotOffered } from "./oauth/oauthFetch.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import { decodeToolResult, type DecodedToolResult } from "./decodeToolResult.js";
import { DepthGuardTransport, MAX_MESSAGE_DEPTH, MESSAGE_TOO_DEEP } from "./DepthGuardTransport.js";
import { jsonRpcCodeName } from "./jsonRpcCodeName.js";
import { McpToolError } from "./McpToolError.js";
import { ResponseTooLargeError } from "./limitResponseSize.js";
import { describeBytes, replyTooLargeIn } from "../util/ReplyTooLarge.js";
import { MAX_SERVER_MESSAGE_BYTES, MESSAGE_TOO_LARGE } from "./StdioProcessTransport.js";

/** How long an HTTP server has to answer the request that ends its session before lllm closes without it. */
const SESSION_END_MS = 2000;

/** A tool as the server lists it (the SDK's `Tool`). */
export type McpToolInfo = Tool;

/**
 * One live connection to one MCP server: the client, its transport, the server's tools, and for a stdio server
 * its process. `start()` connects and lists the tools; `callTool()` calls one; `close()` disconnects and makes
 * sure the process is gone. Used through `McpConnections`, which starts each server once per run.
 */
export class McpConnection {
  readonly config: McpServerConfig;
  /** The server's tools, every page of `tools/list`; filled by `start()`. */
  tools: McpToolInfo[] = [];
  #client: Client;
  #server: ServerTransport | undefined;
  readonly #cwd: string | undefined;
  readonly #hooks: McpClientHooks;
  #closing = false;
  #closed: Promise<void> | undefined;
  /** The request `start()` is at, for its errors. */
  #startStep: "initialize" | "tools/list" = "initialize";

  constructor(config: McpServerConfig, options: { cwd?: string | undefined; hooks?: McpClientHooks | undefined } = {}) {
    this.config = config;
    this.#cwd = options.cwd;
    this.#hooks = options.hooks ?? {};
    this.#client = this.#newClient();
  }

  /** The transport the server is reached by: `stdio`, `http` (Streamable HTTP) or `sse`; set by `start()`. */
  get transportKind(): ServerTransport["kind"] | undefined {
    return this.#server?.kind;
  }

  get name(): string {
    return this.config.name;
  }

  /** The pid of a stdio server's process, once started. */
  get pid(): number | undefined {
    return this.#server?.process?.pid;
  }

  /**
   * Connect (spawning a stdio server) and list its tools, within `timeoutMs`. A failure closes the connection
   * and throws an error naming the server, with the tail of its stderr: `ConfigError` when the command does not
   * exist (the config must change), `ToolError` otherwise.
   */
  async start(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const work = (async () => {
      await this.#connect(timeoutMs);
      this.#startStep = "tools/list";
      this.tools = await this.#listTools(timeoutMs);
    })();
    const deadline = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    let outcome: void | "timeout";
    try {
      outcome = await Promise.race([work, deadline]);
    } catch (error) {
      throw await this.#startFailure(error);
    } finally {
      clearTimeout(timer);
    }
    if (outcome === "timeout") {
      work.catch(() => {}); // it fails once the connection closes below; the timeout is the error to report
      await this.close();
      throw new ToolError("mcp_server_start_timeout", `MCP server \`${this.name}\` (${describeServer(this.config)}) did not start within ${seconds(timeoutMs)}${this.#server?.stderr?.describe() ?? ""}`, {
        hint:
          this.config.url === undefined
            ? "Check that the command starts an MCP server speaking over stdio (run it by hand); a launcher that installs packages on first start (npx, uvx) is faster with them installed beforehand."
            : "Check that the URL is the server's MCP endpoint and that the server is up.",
      });
    }
  }

  /**
   * Call a tool by its name on the server and decode the result into data and text (see `decodeToolResult`).
   * A timeout, a server that went away, and an error the server answered all throw, naming the server and tool.
   */
  async callTool(tool: string, args: Record<string, unknown>, options: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<DecodedToolResult> {
    const where = { server: this.name, tool };
    let result;
    const onProgress = this.#hooks.onProgress;
    try {
      result = await this.#client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: options.timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        // Progress keeps a slow call alive: the timeout counts from the last sign of life, up to 10 times over.
        ...(onProgress ? { onprogress: (progress) => onProgress({ server: this.name, tool, ...progress }), resetTimeoutOnProgress: true, maxTotalTimeout: options.timeoutMs * 10 } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const tooLarge = tooLargeAnswer(error);
      if (tooLarge) {
        const { bytes, limit } = tooLarge;
        throw new ToolError("mcp_result_too_large", `MCP server \`${this.name}\`: the result of \`${tool}\` is over the size limit (${describeBytes(bytes)} so far; at most ${describeBytes(limit)} in one message), so it was dropped; the server is still connected`, {
          hint: "Ask the tool for less (a filter, a smaller page or range), or have the server write large data to a file and return its path.",
          cause: error,
        });
      }
      if (error instanceof McpError && (error.data as { reason?: unknown } | undefined)?.reason === MESSAGE_TOO_DEEP) {
        const mcpMessage = `the result of \`${tool}\` is nested deeper than ${MAX_MESSAGE_DEPTH} levels, so it was dropped`;
        throw new McpToolError(`MCP server \`${this.name}\`: ${mcpMessage}`, { ...where, mcpCode: "INTERNAL_ERROR", mcpMessage, cause: error });
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        throw new ToolError("mcp_tool_timeout", `MCP server \`${this.name}\`: tool \`${tool}\` did not answer within ${seconds(options.timeoutMs)}`, { cause: error });
      }
      if (this.#closing || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) || isNotConnected(error)) {
        throw new ToolError("mcp_server_closed", `MCP server \`${this.name}\` closed the connection during a call to \`${tool}\`${this.#server?.stderr?.describe() ?? ""}`, { cause: error });
      }
      const http = httpFailure(error, this.name);
      if (http) throw http;
      if (error instanceof McpError) {
        const mcpMessage = error.message.replace(/^MCP error -?\d+: /, "");
        throw new McpToolError(error.message, { ...where, mcpCode: jsonRpcCodeName(error.code), mcpMessage, cause: error });
      }
      throw new ToolError("mcp_call_failed", `MCP server \`${this.name}\`: calling \`${tool}\` failed: ${messageOf(error)}`, { cause: error });
    }
    return decodeToolResult(result, where);
  }

  /**
   * Disconnect; for a stdio server, end its stdin, then SIGTERM, then SIGKILL its process group, and wait until
   * it has exited (see `StdioProcessTransport.close`).
   * For an HTTP server, end the session (servers that do not support it are fine). Safe to call twice.
   */
  close(): Promise<void> {
    this.#closing = true;
    return (this.#closed ??= this.#close());
  }

  async #close(): Promise<void> {
    const transport = this.#server?.transport;
    if (!transport) return;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
      // A server that never answers the DELETE must not keep lllm from exiting: past a short wait, the transport's
      // close below aborts the request.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([transport.terminateSession().catch(() => {}), new Promise((resolve) => (timer = setTimeout(resolve, SESSION_END_MS)))]);
      clearTimeout(timer);
    }
    await this.#client.close().catch(() => {});
    await transport.close().catch(() => {});
  }

  /** The roots offered to this server: its config's folders (relative to the tactic's folder), else the hook's. */
  #roots(): Array<{ uri: string; name?: string }> {
    if (this.config.roots) return this.config.roots.map((folder) => ({ uri: pathToFileURL(path.resolve(this.#cwd ?? process.cwd(), folder)).href, name: folder }));
    return this.#hooks.roots ?? [];
  }

  #newClient(): Client {
    const client = new Client(
      { name: "lllm", version: "0.1.0" },
      {
        capabilities: {
          // Declared always: without a hook the question is declined, which tells the server more than silence.
          elicitation: { form: { applyDefaults: true } },
          ...(this.#hooks.sample && this.config.sampling?.max_requests !== 0 ? { sampling: {} } : {}),
          // Only when roots are offered: a server that gets roots (server-filesystem) serves those instead of the
          // folders its own arguments name.
          ...(this.#roots().length > 0 ? { roots: { listChanged: false } } : {}),
        },
      },
    );
    installClientHandlers(client, { config: this.config, hooks: { ...this.#hooks, roots: this.#roots() } });
    return client;
  }

  /**
   * Connect over the config's transport. A `url` server is tried over Streamable HTTP first and, with
   * `transport: auto` (the default), over the older HTTP+SSE transport when it answers the first POST with
   * 4xx other than 401/403 (the fallback the spec describes for servers of 2024).
   */
  async #connect(timeoutMs: number): Promise<void> {
    if (this.config.url === undefined) {
      this.#server = createTransport(this.config, { cwd: this.#cwd });
      await this.#client.connect(new DepthGuardTransport(this.#server.transport), { timeout: timeoutMs });
      return;
    }
    const fetchLike: FetchLike = await serverFetch(this.config, { env: this.#hooks.env ?? process.env, home: this.#hooks.home ?? lllmHome(this.#hooks.env ?? process.env), signIn: this.#hooks.signIn });
    const wanted = this.config.transport ?? "auto";
    this.#server = createHttpTransport(this.config, fetchLike, wanted === "sse" ? "sse" : "http");
    try {
      await this.#client.connect(new DepthGuardTransport(this.#server.transport), { timeout: timeoutMs });
    } catch (error) {
      const status = error instanceof StreamableHTTPError ? error.code : undefined;
      if (wanted !== "auto" || status === undefined || status < 400 || status >= 500 || status === 401 || status === 403) throw error;
      await this.#server.transport.close().catch(() => {});
      this.#client = this.#newClient();
      this.#server = createHttpTransport(this.config, fetchLike, "sse");
      await this.#client.connect(new DepthGuardTransport(this.#server.transport), { timeout: timeoutMs });
    }
  }

  async #listTools(timeoutMs: number): Promise<McpToolInfo[]> {
    // A server without the tools capability has nothing to list (and would answer "method not found").
    if (!this.#client.getServerCapabilities()?.tools) return [];
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    // Each page is within the limit on one message; the list as a whole is too, or 100 pages could hold 1 GB. (No
    // model reads 10 MB of tools: that is millions of tokens.)
    let bytes = 0;
    // A bound on pages: a server that always returns a cursor must not hang the start.
    for (let page = 0; page < 100; page++) {
      const result = await this.#client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
      tools.push(...result.tools);
      bytes += JSON.stringify(result.tools).length;
      if (bytes > MAX_SERVER_MESSAGE_BYTES) {
        throw new ToolError("mcp_server_start_failed", `MCP server \`${this.name}\` (${describeServer(this.config)}) failed to start: its tools are over the size limit (${tools.length} tools in ${page + 1} pages of \`tools/list\`, more than ${describeBytes(MAX_SERVER_MESSAGE_BYTES)} in all)`, {
          hint: "No model can read this many tools: check the server (its version, its settings), or leave it out of the tactic.",
        });
      }
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }

  async #startFailure(error: unknown): Promise<Error> {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const described = describeServer(this.config);
    const closedWhileStarting = this.#closing;
    await this.close();
    if (error instanceof LllmError) return error;
    const stop = this.#hooks.signal;
    if (stop?.aborted) {
      // Its process group was stopped with lllm (Ctrl-C, SIGTERM) or the run's limit: it did not exit by itself.
      const reason = stop.reason instanceof Error ? stop.reason.message : "stopped";
      const message = `MCP server \`${this.name}\` (${described}) was stopped while it was starting (${reason})`;
      return stop.reason instanceof InterruptedError ? new InterruptedError(stop.reason.code, message, { exitCode: stop.reason.exitCode, cause: error }) : new ToolError("mcp_server_closed", message, { cause: error });
    }
    if (closedWhileStarting) return new ToolError("mcp_server_closed", `MCP server \`${this.name}\` was closed while it was starting`, { cause: error });
    if (code === "ENOENT" || code === "EACCES") {
      return new ConfigError("mcp_command_not_found", `MCP server \`${this.name}\`: cannot run \`${this.config.command}\`: ${code === "ENOENT" ? "command not found" : "permission denied"}`, {
        hint: "Install the program, or give its full path in `command` (servers see only PATH, HOME, SHELL, TERM, USER, LOGNAME and the config's `env`).",
        cause: error,
      });
    }
    const http = httpFailure(error, this.name);
    if (http) return http;
    const tooLarge = tooLargeAnswer(error);
    if (tooLarge) {
      return new ToolError("mcp_server_start_failed", `MCP server \`${this.name}\` (${described}) failed to start: its answer to \`${this.#startStep}\` is over the size limit (${describeBytes(tooLarge.bytes)} so far; at most ${describeBytes(tooLarge.limit)} in one message)`, {
        hint: "No MCP message needs to be this large: check the server (its version, its settings), or leave it out of the tactic.",
        cause: error,
      });
    }
    if (error instanceof McpError && (error.data as { reason?: unknown } | undefined)?.reason === MESSAGE_TOO_DEEP) {
      return new ToolError("mcp_server_start_failed", `MCP server \`${this.name}\` (${described}) failed to start: its answer to \`${this.#startStep}\` is nested deeper than ${MAX_MESSAGE_DEPTH} levels`, {
        hint: "No MCP message needs to be nested this deeply: check the server (its version, its settings), or leave it out of the tactic.",
        cause: error,
      });
    }
    // The stderr pipe delivers its last chunks around the exit; let them arrive before reading the tail.
    await new Promise((resolve) => setImmediate(resolve));
    const stdio = this.config.url === undefined;
    const reason =
      error instanceof McpError && error.code === ErrorCode.ConnectionClosed
        ? stdio
          ? "the process exited before answering"
          : "the connection closed"
        : error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0
          ? `the server answered HTTP ${error.code} to the first POST` // its body is often an HTML error page
          : messageOf(error);
    return new ToolError("mcp_server_start_failed", `MCP server \`${this.name}\` (${described}) failed to start: ${reason}${this.#server?.stderr?.describe() ?? ""}`, {
      hint: stdio ? `Run \`${described}\` by hand to see why; it must be an MCP server that speaks over stdio.` : "Check the URL (the MCP endpoint, often /mcp; /sse for the older HTTP+SSE transport with `transport: sse`), that the server is up, and the headers it needs.",
      cause: error,
    });
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}


/**
 * The failures of an HTTP server that need the user: a sign-in nobody can do here, an OAuth step that failed, a
 * server that still refuses lllm's credentials. `undefined` for anything else.
 */
function httpFailure(error: unknown, server: string): LllmError | undefined {
  const root = rootCause(error);
  if (root instanceof SignInNeeded) {
    return new ConfigError("mcp_oauth_sign_in_needed", `MCP server \`${server}\` needs a sign-in (OAuth), and there is no terminal to sign in from`, {
      hint: "Sign in once from a terminal (`lllm mcp tools <url>`; the tokens are kept in $LLLM_HOME/mcp/oauth), set $BROWSER, or give the server a machine client: oauth: {grant: client_credentials, client_id: ..., client_secret_env: ...}.",
      cause: error,
    });
  }
  if (root instanceof OAuthNotOffered) {
    const said = root.serverMessage ? `: ${JSON.stringify(escapeControlCharacters(root.serverMessage, { all: true }))}` : "";
    return new ConfigError("mcp_token_needed", `MCP server \`${server}\` needs a token: it answered HTTP ${root.status}${said}, and offers no OAuth sign-in`, {
      hint: "Put the token in an environment variable and name the variable: `bearer_token_env: NAME` on the server in the tactic, or `lllm mcp tools --bearer-token-env NAME <url>` (for another header, `headers:` in the tactic, `--header` on the command line).",
      cause: error,
    });
  }
  if (root instanceof UnauthorizedError || (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403))) {
    return new ToolError("mcp_unauthorized", `MCP server \`${server}\` refused lllm's credentials: ${refusalText(root)}`, {
      hint: "Check the token (bearer_token_env) or the OAuth client settings; a stored sign-in is in $LLLM_HOME/mcp/oauth (delete the server's file there to sign in again).",
      cause: error,
    });
  }
  if (root instanceof OAuthFlowError) {
    // The SDK's words for `oauth.issuer` not matching the authorization server the MCP server names.
    const elsewhere = /is bound to authorization server/.test(root.message);
    const hint = elsewhere
      ? "The MCP server names another authorization server than `oauth.issuer`, so the client's credentials were not sent. If the authorization server really moved, change `issuer`; otherwise do not trust this server with them."
      : "Check the server's OAuth settings (its authorization server, the client_id and secret) and that its authorization server is up.";
    return new ToolError("mcp_oauth_failed", `MCP server \`${server}\`: signing in (OAuth) failed: ${serverText(root.message)}`, { hint, cause: error });
  }
  return undefined;
}

/** A refusal's text: the server's JSON-RPC error message when the SDK quotes its body (`Error POSTing to endpoint: {…}`). */
function refusalText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const body = /^(?:Streamable HTTP error: )?Error POSTing to endpoint: (\{.*\})$/s.exec(message)?.[1];
  if (error instanceof StreamableHTTPError && body !== undefined) {
    try {
      const said = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
      if (typeof said === "string") return `it answered HTTP ${error.code}: ${JSON.stringify(escapeControlCharacters(said.slice(0, 300), { all: true }))}`;
    } catch {
      // not JSON after all: the SDK's message as it is
    }
  }
  return serverText(message);
}

/**
 * Text a server controls (an HTTP body the SDK quotes, a JSON-RPC error message) inside one of lllm's messages: on
 * one line, so that a line break in it cannot start a line of lllm's own on stderr (`lllm: error: …`), and short,
 * since the SDK quotes a whole body (an HTML error page, say).
 */
function serverText(text: string): string {
  const line = escapeControlCharacters(text, { all: true });
  return line.length > SERVER_TEXT_LIMIT ? `${line.slice(0, SERVER_TEXT_LIMIT)}…` : line;
}

/** At most this much of a server's text is quoted in a message: enough to read its complaint. */
const SERVER_TEXT_LIMIT = 500;

function rootCause(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error && current.cause !== undefined && !(current instanceof SignInNeeded) && !(current instanceof OAuthFlowError); depth++) current = current.cause;
  return current;
}

/**
 * The size of an answer over the limit on one message: the error answer a transport gives in its place (stdio, an
 * event stream), or the failure of a body read past the limit (see `limitResponseSize`).
 */
function tooLargeAnswer(error: unknown): { bytes: number; limit: number } | undefined {
  if (error instanceof McpError && (error.data as { reason?: unknown } | undefined)?.reason === MESSAGE_TOO_LARGE) return error.data as { bytes: number; limit: number };
  const found = replyTooLargeIn(error);
  return found instanceof ResponseTooLargeError ? { bytes: found.bytes, limit: found.limit } : undefined;
}

function isNotConnected(error: unknown): boolean {
  return error instanceof Error && error.message === "Not connected";
}

/** An error's message with its cause's code (fetch hides ECONNREFUSED in `cause`), as a server's text (see `serverText`). */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return serverText(String(error));
  const cause = error.cause as NodeJS.ErrnoException | undefined;
  const detail = cause && typeof cause === "object" ? (cause.code ?? cause.message) : undefined;
  return serverText(detail && !error.message.includes(String(detail)) ? `${error.message} (${detail})` : error.message);
}
