import type { Document, Node } from "yaml";
import { yaml } from "../util/lazyYaml.js";
import { CONFIG_LIMITS } from "./configLimits.js";
import type { YamlProblem } from "./YamlProblem.js";
import { quoteKey } from "./quoteKey.js";

/**
 * The aliases of a parsed document that its data could not hold, each at the alias: one inside the value its anchor
 * names (`a: &a {b: *a}`: the data would contain itself, and every walk over it would never end), one with no
 * anchor before it, and the alias at which the values repeated through aliases pass `CONFIG_LIMITS.maxAliasedValues`
 * (a "billion laughs" file: a few lines whose aliases of aliases expand to millions of values). The yaml library's
 * own `maxAliasCount` (given wherever lllm expands aliases) bounds repeats per anchor but says neither where nor
 * why; a cycle it accepts. Walks the node tree in document order, as the library resolves aliases (the last anchor
 * of a name before the alias); the depth is bounded by `CONFIG_LIMITS.maxDepth`, checked before.
 */
export function aliasProblems(document: Document.Parsed): YamlProblem[] {
  const problems: YamlProblem[] = [];
  const anchors = new Map<string, Node>();
  /** The expanded size (values, aliases counted as what they repeat) of each anchored node, once it is complete. */
  const sizes = new Map<Node, number>();
  /** The collections enclosing the node being visited. */
  const open = new Set<Node>();
  let repeated = 0;
  let overLimit = false;

  const visit = (node: unknown): number => {
    if (yaml.isAlias(node)) {
      const offset = node.range?.[0] ?? 0;
      const target = anchors.get(node.source);
      if (target === undefined) {
        problems.push({ offset, code: "BAD_ALIAS", message: `the alias ${quoteKey(`*${node.source}`)} has no anchor: an alias repeats a value marked ${quoteKey(`&${node.source}`)} before it` });
        return 1;
      }
      if (open.has(target)) {
        problems.push({ offset, code: "ALIAS_CYCLE", message: `the alias ${quoteKey(`*${node.source}`)} is inside the value its anchor names, which would then contain itself: an alias may repeat only a value that does not hold it` });
        return 1;
      }
      const size = sizes.get(target) ?? 1;
      repeated += size;
      if (repeated > CONFIG_LIMITS.maxAliasedValues && !overLimit) {
        overLimit = true;
        problems.push({ offset, code: "ALIAS_LIMIT", message: `the aliases repeat more than ${CONFIG_LIMITS.maxAliasedValues} values; a config file may repeat at most ${CONFIG_LIMITS.maxAliasedValues} through aliases` });
      }
      return size;
    }
    if (!yaml.isNode(node)) return 0;
    if (node.anchor) anchors.set(node.anchor, node);
    let size = 1;
    if (yaml.isCollection(node)) {
      open.add(node);
      for (const item of node.items) size += yaml.isPair(item) ? visit(item.key) + visit(item.value) : visit(item);
      open.delete(node);
    }
    if (node.anchor) sizes.set(node, size);
    return size;
  };
  visit(document.contents);
  return problems;
}
