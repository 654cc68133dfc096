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
} as const;
