/**
 * `1234567` as `1,234,567`. Not `toLocaleString("en-US")`: its first call loads ICU's number formatting, tens of
 * milliseconds that every `lllm run` paid at its end for a line it prints only with --verbose.
 */
export function formatCount(count: number): string {
  return Number.isInteger(count) ? String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ",") : String(count);
}
