import type { IncomingHttpHeaders } from "node:http";
import { limitsFromConfig, type RunLimits } from "../limits/index.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { badRequest } from "./HttpError.js";
import type { RunLimitName } from "../errors.js";

/** The headers a client lowers its request's limits with, and the `metadata` keys that do the same. */
export const LIMIT_HEADERS = { maxCost: "x-lllm-max-cost", maxTokens: "x-lllm-max-tokens", maxDuration: "x-lllm-max-duration" } as const;
export const LIMIT_METADATA = { maxCost: "lllm_max_cost", maxTokens: "lllm_max_tokens", maxDuration: "lllm_max_duration" } as const;

type LimitKey = keyof typeof LIMIT_HEADERS;

/**
 * The limits of one request's run: the tactic's `limits:`, the server's ceilings (`--max-cost`, `--max-tokens`,
 * `--max-duration`) and the client's own (`X-Lllm-Max-Cost: 0.05`, or `metadata.lllm_max_cost`), each the lowest
 * of those set: a client can lower a limit for its request, never raise it.
 */
export function requestLimits(options: { prepared: PreparedTactic; server: RunLimits; headers: IncomingHttpHeaders; metadata: Record<string, string> | undefined }): { limits: RunLimits; sources: Partial<Record<RunLimitName, string>> } {
  const own = limitsFromConfig(options.prepared.tactic.config.limits);
  const limits: RunLimits = { ...own };
  const sources: Partial<Record<RunLimitName, string>> = {};
  for (const key of Object.keys(LIMIT_HEADERS) as LimitKey[]) {
    const client = clientLimit(options.headers, options.metadata, key);
    const candidates = [own[key], options.server[key], client?.value].filter((value): value is number => value !== undefined);
    if (candidates.length === 0) continue;
    const lowest = Math.min(...candidates);
    limits[key] = lowest;
    // A limit reached names where it was set: the tactic's own (its file:line, said by the budget), the server's flag, or the client's.
    const name = NAMES[key];
    if (lowest !== own[key]) sources[name] = client !== undefined && client.value === lowest ? client.where : `lllm serve --${name.replaceAll("_", "-")}`;
  }
  return { limits, sources };
}

const NAMES: Record<LimitKey, RunLimitName> = { maxCost: "max_cost", maxTokens: "max_tokens", maxDuration: "max_duration" };

function clientLimit(headers: IncomingHttpHeaders, metadata: Record<string, string> | undefined, key: LimitKey): { value: number; where: string } | undefined {
  const header = headers[LIMIT_HEADERS[key]];
  const fromHeader = typeof header === "string" ? header : undefined;
  const fromMetadata = metadata?.[LIMIT_METADATA[key]];
  const text = fromHeader ?? fromMetadata;
  if (text === undefined) return undefined;
  const value = Number(text);
  const where = fromHeader !== undefined ? `header ${LIMIT_HEADERS[key]}` : `metadata.${LIMIT_METADATA[key]}`;
  const whole = key === "maxTokens";
  if (text.trim() === "" || !Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value))) {
    throw badRequest(`${where} must be ${whole ? "a whole number of tokens" : key === "maxCost" ? "a number of US dollars" : "a number of seconds"} above 0 (got ${JSON.stringify(text)})`, fromHeader !== undefined ? null : `metadata.${LIMIT_METADATA[key]}`, "invalid_limit");
  }
  return { value, where };
}
