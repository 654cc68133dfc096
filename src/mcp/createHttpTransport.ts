import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "../config/TacticConfig.js";
import { ConfigError } from "../errors.js";
import type { ServerTransport } from "./createTransport.js";
import { createOAuthProvider } from "./oauth/createOAuthProvider.js";
import type { SignIn } from "./oauth/LllmOAuthProvider.js";
import { oauthFetch } from "./oauth/oauthFetch.js";
import { fetchWithinOrigin } from "../util/fetchWithinOrigin.js";
import { limitResponseSize } from "./limitResponseSize.js";
import { isSecretName, registerSecret } from "../util/redact.js";

/** What an HTTP transport needs beyond the config. */
export interface HttpTransportOptions {
  /** Where secrets named by `*_env` keys are read. */
  env: NodeJS.ProcessEnv;
  /** `$LLLM_HOME`, where OAuth tokens are kept. */
  home: string;
  /** How a browser sign-in reaches the user; absent when nobody can sign in. */
  signIn?: SignIn | undefined;
}

/**
 * The `fetch` every request to a `url` server goes through: the config's headers, a bearer token read from the
 * environment variable `bearer_token_env` names (never from the file, never printed), and OAuth when the server
 * asks for it (see `oauthFetch`). The headers and token go only to the server's own origin, never along a redirect
 * elsewhere. Built once per connection, shared by the Streamable HTTP and SSE transports.
 */
export async function serverFetch(config: McpServerConfig, options: HttpTransportOptions): Promise<FetchLike> {
  const headers: Record<string, string> = { ...config.headers };
  if (config.bearer_token_env !== undefined) {
    const token = options.env[config.bearer_token_env];
    if (!token) {
      throw new ConfigError("mcp_token_missing", `MCP server \`${config.name}\`: the environment variable \`${config.bearer_token_env}\` (bearer_token_env) is not set`, {
        hint: `Set ${config.bearer_token_env} to the server's token before the run.`,
      });
    }
    headers.authorization = `Bearer ${token}`;
  }
  // A server may echo what it was sent (in a tool's result, an error): the token and the config's credential headers
  // are secrets whatever their variable or header is called, removed from what the model, the logs and stderr see.
  for (const [name, value] of Object.entries(headers)) if (isCredentialHeader(name)) for (const secret of credentialsOf(name, value)) registerSecret(secret);
  // The config's headers and the token are for the server alone: a request to another origin (an OAuth
  // authorization server, say) goes without them, and a redirect to another origin is not followed.
  const origin = new URL(config.url!).origin;
  // Every answer, the server's and its authorization server's, is read within the limit on one message.
  const limited = limitResponseSize(fetch);
  const base: FetchLike = (input, init) => {
    if (new URL(input instanceof Request ? input.url : input.toString()).origin !== origin) return limited(input, init);
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) if (!merged.has(name)) merged.set(name, value);
    return fetchWithinOrigin(limited, input, { ...init, headers: merged });
  };
  // A fixed token is the whole story; otherwise a 401 starts OAuth.
  if (config.bearer_token_env !== undefined || Object.keys(headers).some((name) => name.toLowerCase() === "authorization")) return base;
  const provider = await createOAuthProvider(config, options);
  return oauthFetch(provider, new URL(config.url!), base, { scope: config.oauth?.scope });
}

/** A Streamable HTTP transport (`kind: "http"`) or, with `transport: sse`, the older HTTP+SSE one. */
export function createHttpTransport(config: McpServerConfig, fetchLike: FetchLike, kind: "http" | "sse"): ServerTransport {
  const url = new URL(config.url!);
  if (kind === "sse") return { transport: new SSEClientTransport(url, { fetch: fetchLike }), kind };
  return { transport: new StreamableHTTPClientTransport(url, { fetch: fetchLike }), kind };
}

/** `Authorization`, `Cookie`, `X-Api-Key`, `Private-Token`…: a header whose value is a credential. */
function isCredentialHeader(name: string): boolean {
  return /^(?:authorization|proxy-authorization|cookie)$/i.test(name) || isSecretName(name.replace(/-/g, "_"));
}

/**
 * The credentials in a header's value, each of which a server might echo alone: `Bearer abc` is `abc`; `Basic …` is
 * its base64 and the password it decodes to; a cookie header is each cookie's value.
 */
function credentialsOf(name: string, value: string): string[] {
  if (/^cookie$/i.test(name)) return [value, ...value.split(";").map((pair) => pair.slice(pair.indexOf("=") + 1).trim()).filter((cookie) => cookie !== "")];
  const basic = /^Basic\s+(\S+)$/i.exec(value);
  if (basic) {
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
    const password = decoded.slice(decoded.indexOf(":") + 1);
    return [basic[1]!, decoded, ...(password !== "" ? [password] : [])];
  }
  return [value.replace(/^(?:Bearer|Token)\s+/i, "")];
}
