import type { CreateMessageRequest, CreateMessageResult, ElicitRequestFormParams, ElicitResult, LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { SignIn } from "./oauth/LllmOAuthProvider.js";

/** A server's question to the user (form-mode elicitation). */
export interface ElicitationRequest {
  /** The `name` of the server's config. */
  server: string;
  message: string;
  /** The flat JSON Schema of the answer the server wants. */
  schema: ElicitRequestFormParams["requestedSchema"];
}

/**
 * What a client does for the requests and notifications servers send it. Every hook is optional: without
 * `elicit` questions are declined, without `sample` sampling is refused (the server gets an error), and
 * notifications without a hook are dropped.
 */
export interface McpClientHooks {
  /** Ask the user; fields left out of `content` get the schema's defaults (the client declares `applyDefaults`). */
  elicit?: (request: ElicitationRequest) => Promise<Pick<ElicitResult, "action" | "content">>;
  /** Answer a sampling request with a model. Called with the server's config name. */
  sample?: (request: CreateMessageRequest["params"], server: string) => Promise<CreateMessageResult>;
  /** A log message of a server (`notifications/message`). */
  onLog?: (entry: { server: string; level: LoggingLevel; logger?: string | undefined; data: unknown }) => void;
  /** Progress of a tool call (`notifications/progress`). */
  onProgress?: (entry: { server: string; tool: string; progress: number; total?: number | undefined; message?: string | undefined }) => void;
  /** The roots offered to servers that ask (`roots/list`), as `file://` URIs; default none. */
  roots?: Array<{ uri: string; name?: string }>;
  /** How a browser sign-in reaches the user (OAuth); absent when nobody can sign in. */
  signIn?: SignIn | undefined;
  /** `$LLLM_HOME`, where OAuth tokens are kept; default from the environment. */
  home?: string;
  /** Where secrets named by `*_env` keys are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * Aborted when the command or run is stopped (Ctrl-C, SIGTERM, a limit): a server that fails to start meanwhile
   * (its process group was stopped with the CLI) is reported as stopped, not as one that exited by itself.
   */
  signal?: AbortSignal | undefined;
}
