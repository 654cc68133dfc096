import { BudgetError, ConfigError } from "../errors.js";
import type { BatchSpending } from "../batch/BatchItem.js";
import { DUPLICATE_IDS_SHOWN, type BatchStats } from "../batch/runBatch.js";
import { unpricedModels } from "../batch/unpricedModels.js";
import { formatCost } from "../store/RunTally.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { formatCount } from "../util/formatCount.js";
import { writeErr } from "./output.js";
import { roundCost } from "../util/roundCost.js";

/** The summary on stderr at the end of a batch (with --quiet, only when something needs the user's attention). */
export function reportSummary(stats: BatchStats, context: { batchId: string; out?: string; quiet: boolean; notes?: string[] }): void {
  const seconds = ((Date.now() - stats.startedAt) / 1000).toFixed(1);
  const tokens = formatCount(stats.promptTokens + stats.completionTokens);
  const cost = stats.costUnknown > 0 && stats.cost === 0 ? "cost unknown" : `${formatCost(stats.cost)}${stats.costUnknown > 0 ? " (+ items of unknown cost)" : ""}`;
  const counts = [`${stats.ok} ok`, `${stats.failed} failed`];
  if (stats.skipped > 0) counts.push(`${stats.skipped} skipped (already in ${context.out ?? "the output"})`);
  if (stats.duplicates > 0) counts.push(`${stats.duplicates} not run (duplicate id${stats.duplicates === 1 ? "" : "s"})`);
  if (stats.cancelled > 0) counts.push(`${stats.cancelled} cancelled`);
  const lines = [`lllm batch: ${counts.join(", ")} in ${seconds} s; ${tokens} tokens, ${cost}; batch ${context.batchId}`];
  const failedTotal = stats.failed + stats.skippedFailed;
  if (failedTotal > 0) lines.push(`  ${failedTotal} item${failedTotal === 1 ? "" : "s"} failed: the lines with "status":"error" in ${context.out ?? "the output"} say why${context.out ? "; --retry-failed runs them again" : ""}`);
  if (stats.stoppedBy === "interrupted" || stats.stoppedBy === "fail_fast") lines.push(`  stopped before the end${stats.stoppedBy === "fail_fast" ? " (--fail-fast)" : ""}: ${context.out ? "run the same command again to go on" : "give --out FILE to be able to resume"}`);
  // Something the run met that the counts do not show (answers of provider jobs refused, a dataset of nothing).
  const notes = [...(context.notes ?? [])];
  if (stats.ok + stats.failed + stats.skipped + stats.duplicates + stats.cancelled === 0 && stats.stoppedBy === undefined) notes.push("the dataset held no item: nothing was run");
  for (const note of notes) lines.push(`  ${note}`);
  // The summary is the one line --quiet keeps only when something needs the user's attention.
  if (context.quiet && failedTotal === 0 && stats.duplicates === 0 && stats.stoppedBy === undefined && notes.length === 0) return;
  for (const line of lines) writeErr(line);
}

/** Told once, at the end: the items skipped because an earlier item has their id. */
export function duplicatesWarning(stats: BatchStats): string {
  const shown = stats.duplicateIds.map((id) => `\`${id}\``).join(", ");
  const more = stats.duplicateIds.length === DUPLICATE_IDS_SHOWN ? ", …" : "";
  return `${stats.duplicates} item${stats.duplicates === 1 ? " was" : "s were"} not run: ${stats.duplicates === 1 ? "its id is" : "their ids are"} already used by an earlier item of the dataset (${shown}${more}). Results and resume go by id: give each item its own "id" (or none: its line number is used).`;
}

/** The batch stopped starting items at --max-cost or --max-tokens, counting what --out already held. */
export function budgetError(stats: BatchStats, limits: { maxCost?: number; maxTokens?: number; spentBefore: BatchSpending; out?: string }): BudgetError {
  const before = limits.spentBefore;
  const where = `the results already in ${limits.out ?? "the output"}`;
  const cost = roundCost(before.cost + stats.cost);
  const tokens = before.promptTokens + before.completionTokens + stats.promptTokens + stats.completionTokens;
  const beforeTokens = before.promptTokens + before.completionTokens;
  const spent = (verb: string, total: string, earlier: { amount: number; text: string }, now: number): string => {
    if (earlier.amount === 0) return `${total} ${verb}`;
    return now === 0 ? `${where} ${verb} ${total}` : `${total} ${verb}, ${earlier.text} of it by ${where}`;
  };
  // --provider-batch: requests in jobs still running count as spent before their answers come back.
  const committed = stats.committedAtStop ?? 0;
  const reached =
    limits.maxCost !== undefined && cost + committed >= limits.maxCost
      ? `--max-cost ${limits.maxCost} reached: ${spent("spent", formatCost(cost), { amount: before.cost, text: formatCost(before.cost) }, stats.cost)}${committed > 0 ? `, and ${formatCost(committed)} committed (the estimated batch price of requests in provider jobs not answered yet)` : ""}`
      : `--max-tokens ${limits.maxTokens} reached: ${spent("used", `${formatCount(tokens)} tokens`, { amount: beforeTokens, text: formatCount(beforeTokens) }, stats.promptTokens + stats.completionTokens)}`;
  return new BudgetError("batch_budget", `the batch stopped starting items: ${reached}`, { hint: "The limits count what the results already in --out spent. Raise the limit and run the same command again: items already done are skipped." });
}

/** --max-cost with a model whose calls have no known cost: refused before the first item (exit 2). */
export function refuseUnpricedModels(prepared: PreparedTactic): void {
  const unpriced = unpricedModels(prepared);
  if (unpriced.length === 0) return;
  const names = unpriced.map((entry) => `\`${entry.model}\` (agent \`${entry.agent}\`)`).join(", ");
  throw unpricedError(prepared, `${unpriced.length === 1 ? "the model" : "the models"} ${names} ${unpriced.length === 1 ? "has" : "have"} no known price, so what ${unpriced.length === 1 ? "its" : "their"} calls cost could not be counted`, unpriced.map((entry) => entry.model));
}

/** --max-cost cannot be held: name the `prices` setting that fixes it. */
export function unpricedError(prepared: PreparedTactic, what: string, models: string[] = ["MODEL"]): ConfigError {
  const file = prepared.settingsFile ?? ".lllmrc.yaml";
  const example = `prices: {${models.map((model) => `${JSON.stringify(model)}: {input: 0.15, output: 0.6}`).join(", ")}}`;
  return new ConfigError("batch_unpriced_model", `--max-cost cannot hold: ${what}`, {
    location: { file: "--max-cost" },
    hint: `Give the price (US dollars per million tokens) under \`prices:\` in the project settings (${file}), e.g. \`${example}\`; or limit the batch with --max-tokens instead.`,
  });
}
