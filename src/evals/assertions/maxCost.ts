import { verdict, type AssertionHandler } from "./AssertionHandler.js";

/** `max-cost: usd`: at most this many dollars; a run whose model has no price cannot show it did not cost more. */
export const maxCost: AssertionHandler = (value, { run }) => {
  const limit = value as number;
  if (run.cost === null) return verdict(false, `the cost is unknown: a model of the run has no price (give it under \`prices:\` in the project settings)`, { expected: `at most $${limit}`, actual: "unknown" });
  return verdict(run.cost <= limit, `cost $${formatDollars(run.cost)} (at most $${limit})`, { expected: `at most $${limit}`, actual: `$${formatDollars(run.cost)}` });
};

function formatDollars(value: number): string {
  return value === 0 ? "0" : value < 0.0001 ? value.toExponential(2) : value.toFixed(6).replace(/0+$/, "").replace(/\.$/, "");
}
