/**
 * Limits on what a config file (tactic, base, settings, proxy, manifest) may be. They are far above any real file
 * and keep a hostile or broken one from crashing lllm: the YAML composer and everything after it walk nested
 * values recursively, so a small file of deeply nested `[[[…]]]` would overflow the stack or abort node.
 */
export const CONFIG_LIMITS = {
  /** Bytes of one file. */
  maxBytes: 1024 * 1024,
  /** Levels of nested mappings and lists. */
  maxDepth: 100,
  /**
   * Values repeated through aliases (`*name`), counted as expanded: a few lines of aliases of aliases ("billion
   * laughs") would otherwise become millions of values for everything that walks the data.
   */
  maxAliasedValues: 100_000,
  /**
   * The yaml library's own bound on alias repeats (`toJS({maxAliasCount})`: the uses of an anchor times the aliases
   * inside it), given wherever lllm expands aliases; its error names no place, so `aliasProblems` comes first.
   */
  maxAliasCount: 100,
} as const;
