/**
 * The variables the built-in proxies (`builtin/*.yaml`) take their keys from, by proxy: the run store redacts their
 * values whatever their names (`WA_API_DEV` does not look like a key). Listed here, not read from the files at each
 * recorded run (a folder listing and six reads, about half a millisecond); test/proxies/definitions.test.ts checks
 * that the list is the files' own.
 */
export const BUILTIN_KEY_VARIABLES: Readonly<Record<string, string>> = {
  exa: "EXA_API_KEY",
  fmp: "FMP_API_KEY",
  fred: "FRED_API_KEY",
  gt: "SEARCH_API_KEY",
  msd: "MSD_API_KEY",
  wa: "WA_API_DEV",
};
