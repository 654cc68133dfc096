import { isPlainObject } from "../util/isPlainObject.js";
import type { ClientToolSpec } from "./ClientTool.js";
import { badRequest } from "./HttpError.js";
import type { ClientToolChoice } from "./ServedRun.js";

/**
 * The client's model parameters as `model_args` under every agent's own (`temperature`, `top_p`, `seed`, `stop`,
 * and its answer-token limit as `max_tokens`, the spelling lllm's providers translate); undefined when none is set.
 */
export function modelArgsOf(values: { maxTokens: unknown; temperature: unknown; topP: unknown; seed: unknown; stop: unknown }): Record<string, unknown> | undefined {
  const args: Record<string, unknown> = {};
  if (typeof values.maxTokens === "number") args.max_tokens = values.maxTokens;
  if (typeof values.temperature === "number") args.temperature = values.temperature;
  if (typeof values.topP === "number") args.top_p = values.topP;
  if (typeof values.seed === "number") args.seed = values.seed;
  if (typeof values.stop === "string" || Array.isArray(values.stop)) args.stop = values.stop;
  return Object.keys(args).length > 0 ? args : undefined;
}

/**
 * The request's token cap and stop sequences as a provider takes them: a cap of at least 1, stop sequences as
 * strings. Others passed the type check and reached the provider, whose 400 the client got as a 502.
 */
export function checkModelArgs(values: { maxTokens: unknown; maxTokensParam: string; stop?: unknown }): void {
  if (typeof values.maxTokens === "number" && values.maxTokens < 1) throw badRequest(`\`${values.maxTokensParam}\` must be at least 1 (got ${values.maxTokens})`, values.maxTokensParam, "invalid_value");
  if (Array.isArray(values.stop) && !values.stop.every((entry) => typeof entry === "string")) throw badRequest("`stop` must be a string or an array of strings", "stop", "invalid_type");
}

/** `auto`, `none`, `required`, or a named function among the client's tools (`nameOf` reads the protocol's shape). */
export function toolChoiceOf(value: unknown, where: string, tools: ClientToolSpec[], nameOf: (choice: unknown) => string | undefined): ClientToolChoice {
  if (value === "auto" || value === "none" || value === "required") return value;
  const name = isPlainObject(value) ? nameOf(value) : undefined;
  if (name === undefined) throw badRequest(`\`${where}\` must be "auto", "none", "required" or a function by name`, where, "invalid_value");
  if (!tools.some((tool) => tool.name === name)) throw badRequest(`\`${where}\` names \`${name}\`, which is not among the request's tools`, where, "invalid_value");
  return { name };
}
