/** Python's keywords and soft keywords: never usable as a function name. */
const KEYWORDS = new Set(
  "False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case type _".split(" "),
);

/**
 * Names a program expects to mean Python's own builtins, or the prelude's: a tool called `list` or `print` is
 * reachable only as `tools.list(...)`, so that the program's `list()` keeps working.
 */
const RESERVED = new Set(
  (
    "abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex copyright credits " +
    "delattr dict dir divmod enumerate eval exec exit filter float format frozenset getattr globals hasattr hash help hex id input " +
    "int isinstance issubclass iter len license list locals map max memoryview min next object oct open ord pow print property quit " +
    "range repr reversed round set setattr slice sorted staticmethod str sum super tuple vars zip __import__ " +
    "tools artifacts final_answer ToolError MCPToolError ToolApprovalDenied ToolBudgetExceeded ToolResult"
  ).split(" "),
);

/** How a tool appears in a program: its Python name, and whether it is also a bare function. */
export interface PythonName {
  /** The tool's name with `-` as `_` (a valid identifier), used as `tools.<python>`. */
  python: string;
  /** Callable as `<python>(...)` as well as `tools.<python>(...)`. */
  bare: boolean;
}

/** The Python name of a tool name (`[A-Za-z0-9_-]{1,64}`): `-` becomes `_`, a leading digit or a keyword gets `_`. */
export function pythonName(toolName: string): PythonName {
  let python = toolName.replaceAll("-", "_");
  if (/^[0-9]/.test(python)) python = `_${python}`;
  if (KEYWORDS.has(python)) python = `${python}_`;
  return { python, bare: !RESERVED.has(python) && !python.startsWith("_") };
}

/** A valid Python identifier that is not a keyword: parameters with other names can only be passed as `**{...}`. */
export function isPythonIdentifier(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !KEYWORDS.has(name);
}
