/**
 * Dollars to a millionth of a cent: what floating point adds to prices times tokens (0.00003539999999999999 for
 * 0.0000354) is not shown in JSON, results and reports, and sums of costs stay as exact as their parts.
 */
export function roundCost(dollars: number): number {
  return Math.round(dollars * 1e12) / 1e12;
}
