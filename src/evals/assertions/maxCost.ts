import { formatCost } from "../../store/RunTally.js";
import { verdict, type AssertionHandler } from "./AssertionHandler.js";

/** `max-cost: usd`: at most this many dollars; a run whose model has no price cannot show it did not cost more. */
export const maxCost: AssertionHandler = (value, { run }) => {
  const limit = value as number;
  if (run.cost === null) return verdict(false, `the cost is unknown: a model of the run has no price (give it under \`prices:\` in the project settings)`, { expected: `at most $${limit}`, actual: "unknown" });
  return verdict(run.cost <= limit, `cost ${formatCost(run.cost)} (at most $${limit})`, { expected: `at most $${limit}`, actual: formatCost(run.cost) });
};
