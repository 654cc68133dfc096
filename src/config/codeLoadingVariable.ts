/**
 * Variables that make a program load or run code of the variable's choosing when it starts: Node's
 * `NODE_OPTIONS=--require x.cjs`, the dynamic loader's `LD_PRELOAD`, Python's `PYTHONSTARTUP`, a shell's
 * `BASH_ENV`, and their kin in Perl, Ruby, Java, git and ssh. A dotenv file is data (keys, base URLs): one of these
 * in it would run code in lllm's children (command tools, MCP servers, Python kernels) with the user's keys in
 * their environment. `--env-file` drops them, with a warning.
 */
const EXACT = new Set([
  "NODE_OPTIONS",
  "NODE_PATH",
  "NODE_REPL_EXTERNAL_MODULE",
  "PYTHONSTARTUP",
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONUSERBASE",
  "PYTHONBREAKPOINT",
  "BASH_ENV",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PROMPT_COMMAND",
  "PS4",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "PERL5DB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_EXEC_PATH",
  "GIT_PROXY_COMMAND",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_CONFIG_COUNT",
  "GIT_CONFIG_PARAMETERS",
  "PATH",
  // What lllm trusts (see distrust.ts): widened, another user's lllm.config.mjs would run.
  "LLLM_TRUSTED_PATHS",
  // Where lllm takes compiled code from (see codeCacheFolder): a folder of a cloned repository's would run its code.
  "LLLM_CODE_CACHE",
  "SUDO_UID",
]);

/** Families: the dynamic loaders' (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`, macOS `DYLD_*`), bash's exported functions, git's numbered config. */
const PREFIXES = ["LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"];

/** Whether `name` is a variable a dotenv file may not set (see above); in any case, as Windows reads names. */
export function isCodeLoadingVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return EXACT.has(upper) || PREFIXES.some((prefix) => upper.startsWith(prefix));
}
