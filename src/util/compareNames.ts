/**
 * An order for names (tools, packages) as people read them: ignoring case first, then by code unit. Not
 * `localeCompare`: its first call sets up ICU's collation, milliseconds that every command listing a package's
 * tools paid at start.
 */
export function compareNames(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
