/**
 * Dollars to a trillionth (1e-12): what floating point adds to prices times tokens, and to their sums (0.00003539999999999999
 * for 0.0000354), is not shown in JSON, results and reports, and sums of costs stay as exact as their parts.
 */
export function roundCost(dollars: number): number {
  return Math.round(dollars * 1e12) / 1e12;
}

/** A running total of costs: unknown (`null`) once one part is, else the rounded sum. */
export function addCost(total: number | null, cost: number | null): number | null {
  return total === null || cost === null ? null : roundCost(total + cost);
}
