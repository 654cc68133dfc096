import { ConfigError } from "../errors.js";
import { ServedModels } from "../serve/ServedModels.js";
import { writeOut } from "./output.js";
import { servedTactics, type ServeCommandOptions } from "./serve.js";

/** Flags of `lllm a2a card`. */
export interface A2aCardOptions extends Pick<ServeCommandOptions, "package" | "model"> {
  /** The base URL clients reach the server at; default http://127.0.0.1:8080. */
  url?: string;
  /** `--no-auth` sets it false: the card names no security scheme. */
  auth?: boolean;
}

/**
 * `lllm a2a card [TACTIC | PKG_DIR]...`: print the agent card `lllm serve` serves for the same tactics (A2A 1.0's
 * JSON), with its endpoint under `--url`: to check what other agents will read, or to publish it in a registry.
 */
export async function a2aCardCommand(targets: string[], options: A2aCardOptions): Promise<void> {
  const url = options.url ?? "http://127.0.0.1:8080";
  if (!/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(url)) throw new ConfigError("usage_serve", `--url ${JSON.stringify(url)} is not an http(s) URL`, { location: { file: "--url" }, hint: "Give the URL clients reach the server at, e.g. --url https://agents.example.com" });
  const { tactics } = await servedTactics(targets, options);
  const [{ agentCard }, { AgentCard }] = await Promise.all([import("../serve/a2a/agentCard.js"), import("@a2a-js/sdk")]);
  const card = agentCard({ models: new ServedModels(tactics).list(), baseUrl: url, auth: options.auth !== false });
  writeOut(JSON.stringify(AgentCard.toJSON(card), null, 2));
}
