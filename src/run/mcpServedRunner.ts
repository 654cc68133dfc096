import { mcpCallerOf } from "../mcp/serve/mcpToolContext.js";
import type { ServedRunInfo } from "../store/RunRecord.js";
import { tacticRunner } from "../tactics/runTactic.js";
import type { TacticRunner } from "../tactics/TacticRun.js";
import { runRecorded } from "./runRecorded.js";

/**
 * The routes a tactic called over MCP is recorded under (`served.route`, beside `lllm serve`'s `chat.completions`,
 * `responses` and `a2a`): `mcp` over HTTP (`lllm serve`'s and `lllm mcp serve --http`'s `/mcp`), `mcp.stdio` over stdio.
 */
export const MCP_HTTP_ROUTE = "mcp";
export const MCP_STDIO_ROUTE = "mcp.stdio";

/**
 * How a served package's tactics run when an MCP client calls them (`lllm mcp serve`, `lllm serve`'s `/mcp`): each
 * call is a run of its own, recorded in the run log as `lllm serve` records a request (`lllm logs --served`), with
 * how it was asked for: the route (`mcp`, or `mcp.stdio`), the tool's name as the model, and the client's name
 * and version (its `clientInfo`) as the user agent. `environmentSecrets` are the server's, read once when it started.
 */
export function mcpServedRunner(options: { environmentSecrets: readonly string[]; log?: boolean; warn: (message: string) => void }): TacticRunner {
  return {
    async run(prepared, runOptions, context) {
      const caller = mcpCallerOf(context);
      // The run is one of its own, not nested in another: its agents keep their names.
      const { agentPrefix: _nested, ...own } = runOptions;
      const userAgent = caller?.client ?? caller?.userAgent;
      const served: ServedRunInfo = {
        route: caller?.transport === "http" ? MCP_HTTP_ROUTE : MCP_STDIO_ROUTE,
        model: caller?.tool ?? prepared.tactic.config.name ?? "tactic",
        client: userAgent !== undefined ? { user_agent: userAgent } : {},
      };
      const run = await runRecorded(prepared, { ...own, served, environmentSecrets: options.environmentSecrets, ...(options.log !== undefined ? { log: options.log } : {}), warn: options.warn });
      if (!run.ok) throw run.error;
      return run.result;
    },
    withAgents: (request, use) => tacticRunner.withAgents(request, use),
  };
}
