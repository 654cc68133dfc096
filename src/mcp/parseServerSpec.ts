import path from "node:path";
import type { McpServerConfig } from "../config/TacticConfig.js";
import { ConfigError } from "../errors.js";
import { splitCommandLine } from "./splitCommandLine.js";

/** Extra settings given on the command line next to a server spec. */
export interface ServerSpecOptions {
  /** `KEY=VALUE` entries for a stdio server's environment. */
  env?: string[];
  /** `Name: value` entries (or `Name=value`) for an HTTP server's requests. */
  header?: string[];
  /** The environment variable holding an HTTP server's bearer token (`bearer_token_env`). */
  bearerTokenEnv?: string;
}

/**
 * A server config from a command-line spec: an `http(s)://` URL connects over Streamable HTTP; anything else
 * is a command line started over stdio, given as one string (split like a shell would) or as words already
 * split (the arguments after `--`). The server is named after the URL's host or the command's file name.
 */
export function parseServerSpec(spec: string | string[], options: ServerSpecOptions = {}): McpServerConfig {
  const words = typeof spec === "string" ? [spec] : spec;
  if (words.length === 0 || (words.length === 1 && words[0]!.trim() === "")) {
    throw new ConfigError("usage_mcp_server", "no MCP server given", { hint: 'Give a URL (http://127.0.0.1:3000/mcp) or a command ("node server.js" or -- node server.js).' });
  }
  if (words.length === 1 && /^https?:\/\//i.test(words[0]!.trim())) {
    if (options.env && options.env.length > 0) throw new ConfigError("usage_mcp_server", "--env applies to servers started from a command, not to a URL", { hint: "Use --header for an HTTP server." });
    const url = words[0]!.trim();
    let host: string;
    try {
      host = new URL(url).hostname;
    } catch {
      throw new ConfigError("usage_mcp_server", `\`${url}\` is not a valid URL`, { hint: "e.g. http://127.0.0.1:3000/mcp" });
    }
    const headers = parsePairs(options.header ?? [], /:|=/, "--header", "Authorization: Bearer abc");
    const tokenEnv = options.bearerTokenEnv?.trim();
    if (tokenEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) {
      throw new ConfigError("usage_mcp_server", `--bearer-token-env \`${options.bearerTokenEnv}\` is not the name of an environment variable`, { hint: "Give the variable's name, not the token: --bearer-token-env MCP_TOKEN." });
    }
    return { name: host, url, ...(Object.keys(headers).length > 0 ? { headers } : {}), ...(tokenEnv !== undefined ? { bearer_token_env: tokenEnv } : {}) };
  }
  if (options.bearerTokenEnv !== undefined) throw new ConfigError("usage_mcp_server", "--bearer-token-env applies to servers reached by URL, not to a command", { hint: "Use --env KEY=VALUE to configure a stdio server." });
  if (options.header && options.header.length > 0) throw new ConfigError("usage_mcp_server", "--header applies to servers reached by URL, not to a command", { hint: "Use --env KEY=VALUE to configure a stdio server." });
  const argv = words.length === 1 ? splitCommandLine(words[0]!) : words;
  const [command, ...args] = argv;
  if (command === undefined) throw new ConfigError("usage_mcp_server", "no MCP server command given", { hint: 'e.g. lllm mcp tools "node server.js"' });
  const env = parsePairs(options.env ?? [], /=/, "--env", "API_KEY=abc");
  return { name: serverName(command, args), command, args, ...(Object.keys(env).length > 0 ? { env } : {}) };
}

/** Launchers whose script or package (their first argument that is not a flag) names the server better than they do. */
const LAUNCHERS = new Set(["node", "nodejs", "python", "python3", "uv", "uvx", "npx", "pnpx", "bunx", "bun", "deno", "tsx", "jiti"]);
/** A launcher's flags whose value is the program itself, written inline: the server is named after the launcher. */
const INLINE_PROGRAM = new Set(["-e", "--eval", "-p", "--print", "-c"]);
/** A launcher's flags that take the next word as their value (a module to preload, a file of settings). */
const TAKES_VALUE = new Set(["-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--env-file", "--from", "--with"]);

/**
 * The program of a command: `node dist/server.js` -> `server`; `npx -y @scope/server-x` -> `server-x`;
 * `python -m mcp_git` -> `mcp_git`; `my-server --flag` -> `my-server`; `node -e '…'` -> `node`. Never an argument
 * that is not a file or package name (inline code, a sentence).
 */
function serverName(command: string, args: string[]): string {
  const base = path.basename(command);
  let subject = base;
  if (LAUNCHERS.has(base.replace(/\.exe$/, ""))) {
    for (let index = 0; index < args.length; index++) {
      const arg = args[index]!;
      if (INLINE_PROGRAM.has(arg)) break;
      if (TAKES_VALUE.has(arg)) {
        index++;
        continue;
      }
      if (arg.startsWith("-") || arg === "run") continue;
      if (/^[\w@.\/\\:+-]+$/.test(arg)) subject = arg;
      break;
    }
  }
  return path.basename(subject).replace(/\.(?:c|m)?(?:js|ts)$|\.py$/, "") || "server";
}

function parsePairs(entries: string[], separator: RegExp, flag: string, example: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const entry of entries) {
    const match = separator.exec(entry);
    const key = match ? entry.slice(0, match.index).trim() : "";
    if (!match || key === "") throw new ConfigError("usage_mcp_server", `${flag} \`${entry}\` is not a pair`, { hint: `Write ${flag} "${example}".` });
    pairs[key] = entry.slice(match.index + 1).trim();
  }
  return pairs;
}
