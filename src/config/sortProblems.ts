import type { ConfigProblem } from "../errors.js";

/**
 * Problems in reading order: grouped by file (in order of first appearance), then by line and column. Problems
 * without a line come first within their file.
 */
export function sortProblems(problems: ConfigProblem[]): ConfigProblem[] {
  const fileOrder = new Map<string, number>();
  for (const problem of problems) {
    const file = problem.location?.file ?? "";
    if (!fileOrder.has(file)) fileOrder.set(file, fileOrder.size);
  }
  return problems
    .map((problem, index) => ({ problem, index, file: fileOrder.get(problem.location?.file ?? "") ?? 0 }))
    .sort(
      (a, b) =>
        a.file - b.file ||
        (a.problem.location?.line ?? 0) - (b.problem.location?.line ?? 0) ||
        (a.problem.location?.column ?? 0) - (b.problem.location?.column ?? 0) ||
        a.index - b.index,
    )
    .map((entry) => entry.problem);
}
