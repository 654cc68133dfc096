import type { BatchResults } from "./BatchApi.js";
import { escapeControlCharacters } from "../../util/escapeControlCharacters.js";

/** The answers of a job's results that are not used, found before any of them is. */
export interface RefusedAnswers {
  /** Requests of the job whose id came more than once: none of their answers can be told to be theirs. */
  twice: Set<string>;
  /** Answers whose id is no request of the job (another job's, or unknown): how many, and the first few ids. */
  foreign: number;
  foreignIds: string[];
}

export interface CheckResultsOptions {
  /** The job's requests still without an answer. */
  pending: ReadonlySet<string>;
  /** Whether a request not pending was answered already (the job's results read again after a kill): not refused then. */
  answeredBefore: (customId: string) => boolean;
}

/** How many refused ids a message names. */
export const REFUSED_IDS_SHOWN = 5;

/**
 * Read a job's results once, every line (a `BatchResultsError` at one that is not a result: the whole job is then
 * unreadable), to find the answers that must not be used: those whose id came more than once (which is its request's
 * cannot be told), and those whose id is no request of the job (an item must never get another item's answer).
 */
export async function checkResults(results: BatchResults, options: CheckResultsOptions): Promise<RefusedAnswers> {
  const refused: RefusedAnswers = { twice: new Set(), foreign: 0, foreignIds: [] };
  const seen = new Set<string>();
  for await (const result of results.read()) {
    const id = result.customId;
    if (!options.pending.has(id)) {
      if (options.answeredBefore(id)) continue;
      refused.foreign += 1;
      if (refused.foreignIds.length < REFUSED_IDS_SHOWN && !refused.foreignIds.includes(id)) refused.foreignIds.push(id);
    } else if (seen.has(id)) refused.twice.add(id);
    else seen.add(id);
  }
  return refused;
}

/** What a job's refused answers were, for a warning; undefined when none was. */
export function describeRefused(refused: RefusedAnswers): string | undefined {
  const parts: string[] = [];
  // The ids are the provider's text: a newline in one could start a line that reads as lllm's own on stderr.
  const ids = (list: string[], total: number): string => `${list.map((id) => `\`${escapeControlCharacters(id, { all: true })}\``).join(", ")}${total > list.length ? ", …" : ""}`;
  const twice = refused.twice.size;
  if (twice > 0) {
    const one = twice === 1;
    parts.push(`${twice} id${one ? "" : "s"} came more than once (${ids([...refused.twice].slice(0, REFUSED_IDS_SHOWN), twice)}): no answer of ${one ? "it is" : "theirs is"} used, the request${one ? " is" : "s are"} asked again`);
  }
  if (refused.foreign > 0) parts.push(`${refused.foreign} answer${refused.foreign === 1 ? " has an id" : "s have ids"} of no request of this job (${ids(refused.foreignIds, refused.foreign)}): not used`);
  return parts.length > 0 ? parts.join("; ") : undefined;
}
