import type * as Commander from "commander";
import { ConfigError } from "../errors.js";
import { completionData } from "./completionData.js";
import { bashScript, fishScript, zshScript } from "./completionScripts.js";
import { writeOut } from "./output.js";

export interface CompletionOptions {
  list?: string;
  package?: string[];
}

/** `lllm completion bash|zsh|fish`: the script; `--list models|tactics|runs` the words it asks lllm for while completing. */
export async function completionCommand(shell: string | undefined, program: Commander.Command, options: CompletionOptions): Promise<void> {
  if (options.list !== undefined) {
    await listWords(options.list, options.package ?? []);
    return;
  }
  const { helpTopics } = await import("./helpTopics.js");
  const { PROVIDER_ROUTES } = await import("../providers/providerRoutes.js");
  const commands = program.commands.filter((command) => !(command as unknown as { _hidden?: boolean })._hidden).map((command) => command.name());
  // A key's NAME is any variable; the providers' prefixes stand for theirs (`lllm keys set anthropic`).
  const providers = PROVIDER_ROUTES.filter((route) => route.apiKeyEnv !== undefined).map((route) => route.prefix);
  const entries = completionData(program, {
    argumentWords: { help: [...new Set([...Object.keys(helpTopics()), ...commands])], "keys set": providers, "keys get": providers, "keys remove": providers },
  });
  if (shell === "bash") writeOut(bashScript(entries));
  else if (shell === "zsh") writeOut(zshScript(entries));
  else if (shell === "fish") writeOut(fishScript(entries));
  else throw new ConfigError("usage_completion_shell", shell === undefined ? "which shell? lllm completion bash|zsh|fish" : `no completion for \`${shell}\``, { hint: "lllm completion bash, zsh or fish (lllm help getting-started says where each goes)" });
}

/**
 * One word a line, quietly: a completion must never print an error into the user's command line. Nothing of the
 * folder runs: completing happens wherever the user is, in a clone of anyone's repository (no lllm.config.mjs,
 * no package's tool files).
 */
async function listWords(what: string, packages: string[]): Promise<void> {
  try {
    if (what === "models") {
      const { PriceTable } = await import("../providers/PriceTable.js");
      const { providerOfModel } = await import("../providers/modelCatalogue.js");
      const { PROVIDER_ROUTES } = await import("../providers/providerRoutes.js");
      const names = PriceTable.load().names().map((name) => {
        const prefix = providerOfModel(name);
        return prefix === undefined || prefix === "openai" ? name : `${prefix}/${name}`;
      });
      writeOut([...names, ...PROVIDER_ROUTES.map((route) => `${route.prefix}/`)].join("\n"));
    } else if (what === "tactics") {
      const { loadRegistry } = await import("./loadRegistry.js");
      const registry = await loadRegistry(packages, { quiet: true, runCode: false });
      const refs = registry.list().flatMap((pkg) => [...pkg.entries("tactics").values()].map((entry) => entry.ref));
      if (refs.length > 0) writeOut(refs.join("\n"));
    } else if (what === "runs") {
      const { recentRunIds } = await import("./logs.js");
      writeOut(["last", ...(await recentRunIds())].join("\n"));
    }
  } catch {
    // nothing to offer
  }
}
