import { writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors.js";
import { formatCost } from "../store/RunTally.js";
import { summaryLine } from "../util/firstLine.js";
import { redactSecrets } from "../util/redact.js";
import type { ChatSession } from "./ChatSession.js";
import { paint, writeErr } from "./output.js";

/** The slash commands, as `/help` lists them. */
const COMMANDS: ReadonlyArray<[string, string]> = [
  ["/help", "this list"],
  ["/tools", "the tools the agent can call"],
  ["/model NAME", "use another model for the next turns (the conversation is kept)"],
  ["/cost", "model calls, tokens and cost of this session so far"],
  ["/save FILE", "write the conversation to FILE as Markdown"],
  ["/reset", "start a new conversation"],
  ["/exit", "end the session (Ctrl-D does too)"],
];

export const CHAT_HELP = [
  ...COMMANDS.map(([name, what]) => `  ${name.padEnd(12)} ${paint("dim", what)}`),
  paint("dim", '  A line is one turn; for several lines, start and end the block with """. Ctrl-C cancels the answer.'),
].join("\n");

/** `/word args`: a chat command; `//text` sends `/text`; anything else is a turn. */
export function parseSlashCommand(text: string): { name: string; argument: string } | undefined {
  const match = /^\/([a-z][a-z-]*)(?:\s+([\s\S]*))?$/i.exec(text.trim());
  return match ? { name: match[1]!.toLowerCase(), argument: (match[2] ?? "").trim() } : undefined;
}

/** Run a chat command; "exit" ends the session. Its output goes to stderr (stdout carries the answers alone). */
export async function runSlashCommand(command: { name: string; argument: string }, session: ChatSession): Promise<"exit" | undefined> {
  switch (command.name) {
    case "exit":
    case "quit":
      return "exit";
    case "help":
      writeErr(CHAT_HELP);
      return undefined;
    case "reset":
      session.reset();
      writeErr(paint("dim", "A new conversation: the agent remembers nothing of the turns before."));
      return undefined;
    case "model":
      if (command.argument === "") {
        writeErr(`model: ${session.model} ${paint("dim", "(/model NAME to change it)")}`);
        return undefined;
      }
      await session.setModel(command.argument);
      writeErr(paint("dim", `The next turns use ${session.model}.`));
      return undefined;
    case "cost": {
      const { llmCalls, promptTokens, completionTokens, cost } = session.spent;
      const price = cost === null ? "cost unknown (a model without a known price, or --no-log)" : formatCost(cost);
      writeErr(`${llmCalls} model call${llmCalls === 1 ? "" : "s"}, ${promptTokens.toLocaleString("en-US")} + ${completionTokens.toLocaleString("en-US")} tokens, ${price}`);
      return undefined;
    }
    case "tools":
      writeErr(toolsText(session));
      return undefined;
    case "save": {
      if (command.argument === "") {
        writeErr(`${paint("yellow", "lllm:")} /save needs a file: /save chat.md`);
        return undefined;
      }
      const file = path.resolve(command.argument);
      saveTranscript(file, command.argument, transcriptMarkdown(session));
      writeErr(paint("dim", `Saved ${session.turns.length} turn${session.turns.length === 1 ? "" : "s"} to ${file}`));
      return undefined;
    }
    default:
      writeErr(`${paint("yellow", "lllm:")} unknown command /${command.name}: /help lists them (start a line with // to send one beginning with /)`);
      return undefined;
  }
}

/** Write the transcript; a folder, a missing folder or a refusal is said as such (the session goes on). */
function saveTranscript(file: string, given: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = { location: { file: "/save" }, cause: error };
    if (code === "EISDIR") throw new ConfigError("usage_file", `/save ${given}: that is a folder, not a file`, { ...where, hint: `Name a file, e.g. /save ${path.join(given, "chat.md")}` });
    if (code === "ENOENT" || code === "ENOTDIR") throw new ConfigError("usage_file", `/save ${given}: the folder ${path.dirname(file)} does not exist`, { ...where, hint: "Create the folder first, or name a file in a folder that exists, e.g. /save chat.md" });
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") throw new ConfigError("usage_file", `/save ${given}: ${file} cannot be written here (${code === "EROFS" ? "a read-only file system" : "permission denied"})`, { ...where, hint: "Name a file in a folder you can write to, e.g. /save chat.md" });
    throw new ConfigError("usage_file", `/save ${given}: ${file} could not be written: ${(error as Error).message}`, where);
  }
}

function toolsText(session: ChatSession): string {
  const agent = session.boundAgent;
  const lines = agent.tools.map(({ tool, ref }) => `  ${tool.name.padEnd(20)} ${paint("dim", `${summaryLine(tool.description.trim(), 80)} (${ref})`)}`);
  for (const capability of agent.capabilities) lines.push(`  ${capability.ref.padEnd(20)} ${paint("dim", capability.kind === "proxy" ? "a proxy: its API through CALL_API" : "a tactic as a tool")}`);
  for (const server of agent.config.mcp_servers ?? []) lines.push(`  ${String(server.name).padEnd(20)} ${paint("dim", "an MCP server: its tools are listed when it starts")}`);
  return lines.length > 0 ? lines.join("\n") : paint("dim", `The agent ${agent.name} has no tools.`);
}

/** The conversation as Markdown; every secret lllm knows is redacted, as in every other output. */
export function transcriptMarkdown(session: ChatSession): string {
  const parts = [`# lllm chat: ${session.tacticName}, agent ${session.agent}`, "", `Model: ${session.model}. Saved ${new Date().toISOString()}.`];
  for (const turn of session.turns) {
    parts.push("", "## You", "", turn.input, "", `## ${session.agent}`, "");
    for (const call of turn.toolCalls) parts.push(`- tool \`${call.name}\` ${"`"}${JSON.stringify(call.arguments)}${"`"}${call.error !== undefined ? ` failed: ${call.error}` : ""}`);
    if (turn.toolCalls.length > 0) parts.push("");
    parts.push(turn.answer);
  }
  return redactSecrets(`${parts.join("\n")}\n`);
}
