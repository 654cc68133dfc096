import { performance } from "node:perf_hooks";
import type { RunLimitName } from "../errors.js";
import type { ModelPrice } from "../providers/PriceTable.js";
import type { RunLimits } from "./RunLimits.js";

/** Says where a limit was set, for messages: `--max-cost`, `limits.max_cost of research.yaml:4:9`. */
export type LimitSource = (name: RunLimitName) => string;

/** One set of limits and what was spent under it: the run's, or a nested tactic's own (both count every call within). */
export interface LimitNode {
  limits: RunLimits;
  source: LimitSource;
  parent: LimitNode | undefined;
  cost: number;
  tokens: number;
  toolCalls: number;
  /** The worst cases of the requests on their way (their prompts and answer rooms), held until their answers are counted. */
  reservedCost: number;
  reservedTokens: number;
  startedAt: number;
  /** `performance.now()` when `max_duration` runs out. */
  deadline?: number;
  timer?: NodeJS.Timeout;
}

/** How much room a limit leaves a request's answer, in answer tokens. */
export interface Room {
  node: LimitNode;
  limit: "max_cost" | "max_tokens";
  /** With the requests on their way holding their worst cases. */
  now: number;
  /** Once they are all answered (and counted as if they had spent nothing more). */
  idle: number;
}

/** A scope's limits, with nothing spent yet, under `parent` (the enclosing scope's, checked too). */
export function limitNode(limits: RunLimits, source: LimitSource | undefined, parent: LimitNode | undefined): LimitNode {
  return { limits, source: source ?? ((name) => `limits.${name}`), parent, cost: 0, tokens: 0, toolCalls: 0, reservedCost: 0, reservedTokens: 0, startedAt: performance.now() };
}

/**
 * The answer room each cost and token limit of `node` and the enclosing ones leaves a prompt of `promptTokens` at
 * `price`: in answer tokens, with the requests on their way holding their worst cases, and once they are answered.
 */
export function roomsFor(node: LimitNode, promptTokens: number, price: ModelPrice): Room[] {
  const rooms: Room[] = [];
  for (let scope: LimitNode | undefined = node; scope; scope = scope.parent) {
    const { maxCost, maxTokens } = scope.limits;
    if (maxTokens !== undefined) {
      const idle = maxTokens - scope.tokens - promptTokens;
      rooms.push({ node: scope, limit: "max_tokens", now: idle - scope.reservedTokens, idle });
    }
    if (maxCost !== undefined) {
      const idleDollars = maxCost - scope.cost - (promptTokens * price.input) / 1_000_000;
      const tokens = (dollars: number): number => (price.output > 0 ? (dollars * 1_000_000) / price.output : dollars >= 0 ? Number.POSITIVE_INFINITY : -1);
      rooms.push({ node: scope, limit: "max_cost", now: tokens(idleDollars - scope.reservedCost), idle: tokens(idleDollars) });
    }
  }
  return rooms;
}
