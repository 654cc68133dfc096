/**
 * The program in a model's reply: the code of its ```python (or ```py) blocks, joined in order; without such a
 * block, the code of its plain ``` blocks; without any block, the whole reply (models asked for code often send
 * just the code). `undefined` when there is no code at all.
 */
export function extractProgram(reply: string): string | undefined {
  const blocks = [...reply.matchAll(/```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n([\s\S]*?)(?:```|$)/g)].map((match) => ({ language: (match[1] ?? "").toLowerCase(), code: match[2] ?? "" }));
  const python = blocks.filter((block) => block.language === "python" || block.language === "py" || block.language === "python3");
  const chosen = python.length > 0 ? python : blocks.filter((block) => block.language === "");
  const code = chosen.length > 0 ? chosen.map((block) => block.code.replace(/\s+$/, "")).join("\n\n") : reply;
  return code.trim() === "" ? undefined : code;
}
