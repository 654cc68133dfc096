import type * as Commander from "commander";
import { readFileSync } from "node:fs";
import path from "node:path";
import { useValidatorCache } from "../util/sharedAjv.js";
import { requireVendored } from "../util/lazyModule.js";
import { useTranspileCache } from "../registry/transpileCache.js";
import { useParsedYamlCache } from "../config/parsedYamlCache.js";
import { codeCacheFolder } from "../config/lllmHome.js";
import { useCodeCache } from "../util/codeCache.js";
import { registerEnvironmentSecrets } from "../util/redact.js";
import { ConfigError } from "../errors.js";
import { failIfLoopDrains } from "./failIfLoopDrains.js";
import { failureJson, paint, reportError, useColor, warn, writeOut } from "./output.js";
import { escapeJsonControlCharacters } from "../util/escapeControlCharacters.js";
import { addExamples } from "./helpExamples.js";
import { checkCommandWords } from "./checkCommandWords.js";
import { reserveStdout } from "./reserveStdout.js";
import { handleSignals } from "./handleSignals.js";
import { applyEnvironment } from "./applyEnvironment.js";
import { writeOwnStdout } from "../util/ownStdout.js";

// commander is CommonJS: `require` loads it as such (from its one-file copy when built), where `import` would
// first scan it for export names (Node's CommonJS lexer), a cost every command paid at start.
// Loaded when the program is built, after the code cache is set up (util/codeCache.ts).
let commander: typeof Commander | undefined;
const cli = (): typeof Commander => (commander ??= requireVendored<typeof Commander>("commander"));
type Command = Commander.Command;

/** Global flags every command sees. */
export interface GlobalOptions {
  verbose?: boolean;
  envFile?: string[];
}

/**
 * Commands that do not apply `$LLLM_HOME/keys.json`: those that read it themselves, to show it as it is (keys,
 * doctor), and those that never call a model, a proxy or a server, so that no key is read (help, schema, logs,
 * completion, init). A keys file lllm refuses (others may read it, bad JSON) does not stop them: it is what
 * `lllm help`, `lllm keys path` and `lllm doctor` are for. `validate` applies it: it loads packages' code, which
 * sees the variables a run would.
 */
const WITHOUT_KEYS = new Set(["keys", "doctor", "completion", "init", "help", "schema", "logs"]);

/** Commands that only say whether keys are set: a keys file lllm refuses is a warning for them, not an error. */
const KEYS_IF_USABLE = new Set(["models"]);

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

/**
 * Repeatable options (`-p a -p b`). Variadic options (`<dir...>`) would swallow the positional argument that
 * follows them (`lllm tools call -p pkg ref` would take `ref` as a second package).
 */
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** The top-level commands, each defined in `buildProgram` under `wanted(name)`. */
export const TOP_LEVEL_COMMANDS = new Set(["validate", "run", "chat", "batch", "test", "worker", "tools", "proxy", "exec", "a2a", "mcp", "serve", "logs", "models", "init", "completion", "doctor", "keys", "add", "install", "remove", "update", "list", "outdated", "pack", "publish", "schema", "help"]);

/** What `buildProgram` builds. */
export interface BuildProgramOptions {
  /**
   * The one top-level command to define (with its subcommands): the command a start names. Defining the other
   * commands' options costs every start a few milliseconds, and nothing reads them there: a command's parsing, errors
   * and help (which lists the global options, not the other commands) are the same without them.
   */
  only?: string;
}

/**
 * Build the command tree. Each action imports its module on demand, so `lllm --version` and `lllm --help` load
 * nothing but commander.
 */
export function buildProgram(options: BuildProgramOptions = {}): Command {
  const { Argument, Command, Option } = cli();
  const wanted = (name: string): boolean => {
    if (!TOP_LEVEL_COMMANDS.has(name)) throw new Error(`buildProgram: add \`${name}\` to TOP_LEVEL_COMMANDS`);
    return options.only === undefined || options.only === name;
  };
  const program = new Command("lllm")
    .description("Run LLM agents from declarative YAML/JSON tactic files.")
    .version(version(), "-V, --version")
    .option("-v, --verbose", "show stack traces and more detail on stderr")
    .option("--env-file <file>", "load variables from a dotenv file first; the environment wins (repeatable)", collect)
    .showHelpAfterError("(run with --help for usage)")
    // Global options (--verbose) are listed in every command's help too: `lllm run --help` is where users look.
    // Titles in bold; commander strips the codes when its stream gets no colour (getOutHasColors below).
    .configureHelp({ showGlobalOptions: true, styleTitle: (title) => `\u001b[1m${title}\u001b[22m` })
    .configureOutput({
      writeErr: (text) => process.stderr.write(text),
      writeOut: (text) => writeOwnStdout(text),
      // Usage errors read like every other error: `lllm: error: …`.
      outputError: (text, write) => write(text.startsWith("error: ") ? `lllm: ${text}` : text),
      // One decision for colour everywhere (NO_COLOR, --no-color, FORCE_COLOR, a terminal): see output.ts.
      getOutHasColors: () => useColor(process.stdout),
      getErrHasColors: () => useColor(process.stderr),
    })
    // Before any .command(): subcommands copy these settings when they are created.
    .exitOverride()
    // `lllm help` is a command of its own: topics besides commands.
    .helpCommand(false);

  if (wanted("validate")) {
    program
      .command("validate")
      .description("load a tactic, validate it, resolve and bind every ref; print a summary")
      .argument("<tactic>", "tactic file (YAML or JSON)")
      .option("-m, --model <name>", "use this model for every agent")
      .option("-p, --package <dir>", "also load these package folders (repeatable)", collect)
      .option("--json", "print the summary as JSON")
      .action(async (tactic: string, options: Record<string, unknown>, command: Command) => {
        const { validateCommand } = await import("./validate.js");
        await validateCommand(tactic, command.optsWithGlobals());
      });
  }

  if (wanted("run")) {
    program
      .command("run")
      .description("run a tactic and print its answer")
      .argument("[tactic]", "tactic file, or a package ref such as weather.tactics:weather (with --continue: default the run's)")
      .option("-i, --input <text>", "the input (default: standard input when it is not a terminal)")
      .option("-f, --input-file <file>", "read the input from a file (`-` for standard input)")
      .option("--var <key=value>", "a template argument for the prompts (repeatable)", collect)
      .option("-m, --model <name>", "use this model for every agent (e.g. gpt-4o-mini, ollama/llama3, scripted:turns.yaml)")
      .option("--max-steps <n>", "override every agent's max_interrupt_steps")
      .option("--timeout <seconds>", "how long a model request may go without progress, for every agent (default: each agent's `timeout`, else 120)")
      .option("-p, --package <dir>", "also load these package folders (repeatable)", collect)
      .option("--json", "print one JSON object: {schema_version, output, usage, tool_calls, model_calls, duration_ms, cost, run_id}, and a failure as one too")
      .option("--stream", "print the answer as it arrives (default on a terminal)")
      .option("--no-stream", "print the answer only when it is complete")
      .option("--dry-run", "print the first request that would be sent, and call nothing")
      .addOption(new Option("--approve <which>", "calls to tools that need approval (the tool loop's and programs'): run all, or none (default: ask on a terminal, else none)").choices(["all", "none"]))
      .option("--max-cost <usd>", "stop the run before it spends more than this many US dollars on model calls, nested tactics and programs included (exit 3; over the tactic's limits.max_cost)")
      .option("--max-tokens <n>", "stop the run before it uses more than N tokens, prompt and answer (exit 3)")
      .option("--max-tool-calls <n>", "stop the run before its tool calls (programs' included) exceed N (exit 3)")
      .option("--max-duration <seconds>", "stop the run after this many seconds (exit 3)")
      .option("--notebook-out <file>", "notebook pattern: write the cells and their outputs as a Jupyter notebook (.ipynb)")
      .option("--no-log", "do not record this run in the run store ($LLLM_HOME/logs.db; LLLM_LOG=0 does the same)")
      .option("-c, --continue [id]", "continue the dialog of a logged run (default: the last) with a new input")
      .option("--resume [id]", "go on with a run that was interrupted, crashed or failed, from where it stopped, without calling the model or the tools again for its recorded steps (default: the last interrupted or crashed run started here)")
      .option("--force", "with --resume: resume a run whose tactic changed since (its recorded answers are replayed in order)")
      .option("--rerun-unknown", "with --resume: run again the tool calls the stop cut short, even of tools not declared idempotent")
      .action(async (tactic: string | undefined, options: Record<string, unknown>, command: Command) => {
        const { runCommand } = await import("./run.js");
        await runCommand(tactic, command.optsWithGlobals());
      });
  }

  if (wanted("chat")) {
    program
      .command("chat")
      .description("talk with a tactic's agent, turn by turn (with no tactic: a plain assistant on --model); a line of stdin is a turn when it is not a terminal")
      .argument("[tactic]", "tactic file or package ref, not a code-action or notebook one (those run with lllm run) (default: a plain assistant on --model, else the settings' model)")
      .option("--agent <name>", "the agent to talk to (default: the tactic's `agent`, else its first)")
      .option("-m, --model <name>", "use this model (e.g. gpt-4o-mini, ollama/llama3)")
      .option("-p, --package <dir>", "also load these package folders (repeatable)", collect)
      .option("--var <key=value>", "a template argument for the prompts (repeatable)", collect)
      .option("--max-steps <n>", "override the agent's max_interrupt_steps")
      .addOption(new Option("--approve <which>", "calls from programs to tools that need approval: run all, or none (default: none)").choices(["all", "none"]))
      .option("--no-log", "do not record the turns in the run store")
      .option("-c, --continue [id]", "go on with the conversation of a logged run or chat (default: the last)")
      .option("--json", "print one JSON line per turn (JSONL): {schema_version, output, usage, cost, run_id}, or a failed turn's {schema_version, error, output: null, usage, cost, run_id}")
      .action(async (tactic: string | undefined, options: Record<string, unknown>, command: Command) => {
        const { chatCommand } = await import("./chat.js");
        await chatCommand(tactic, command.optsWithGlobals());
      });
  }

  if (wanted("batch")) {
    program
      .command("batch")
      .description("run a tactic over every item of a dataset (JSONL, CSV or text lines); one NDJSON result per item")
      .argument("[tactic]", "tactic file, or a package ref")
      .option("--inputs <file>", "the dataset: JSONL (a string, or {input, vars, id} per line), CSV (header row; `input` column) or text lines; a file, a pipe or a FIFO such as <(command), read once as a stream; `-` for standard input")
      .option("-o, --out <file>", "append the results here (NDJSON); running the same command again skips the items already done (default, or `-`: standard output)")
      .option("--concurrency <n>", "items running at once (default 4; lowered on 429s and grown back; with --provider-batch 100: items replaying their answered turns or calling tools, while the waiting ones hold no slot; 10000 for tactics whose items wait in memory: lllm help provider-batch)")
      .option("--ordered", "write the results in input order")
      .option("--lines", "the dataset is text lines, each line an input")
      .addOption(new Option("--format <format>", "the dataset's format (default: from the extension, .csv or else JSONL)").choices(["jsonl", "csv", "lines"]))
      .option("--var <key=value>", "a template argument for every item (an item's own vars win) (repeatable)", collect)
      .option("-m, --model <name>", "use this model for every agent")
      .option("-p, --package <dir>", "also load these package folders (repeatable)", collect)
      .option("--max-steps <n>", "override every agent's max_interrupt_steps")
      .option("--timeout <seconds>", "how long a model request may go without progress")
      .addOption(new Option("--approve <which>", "calls to tools that need approval (default: none: nobody is asked in a batch)").choices(["all", "none"]))
      .option("--retry-failed", "run again the items that failed in --out")
      .option("--fail-fast", "stop starting items after the first failure")
      .option("--rpm <n>", "at most N model requests per minute (per provider)")
      .option("--tpm <n>", "at most N tokens per minute (per provider)")
      .option("--max-cost <usd>", "stop starting items once this many US dollars are spent, counting the results already in --out (exit 3); every model needs a known price (exit 2 otherwise)")
      .option("--max-tokens <n>", "stop starting items once this many tokens are used, counting the results already in --out (exit 3)")
      .option("--max-line-size <size>", "the longest dataset line (CSV: record) read; a longer one fails its item (default 64M; a bare number is megabytes)")
      .option("--queue <url>", "spread the items over `lllm worker`s through a Redis queue (redis://[:password@]host:port)")
      .option("--purge", "with --queue, no tactic: remove the keys of batches whose `lllm batch` is gone (with --out FILE: of the one writing FILE)")
      .option("--provider-batch", "send the model requests through the providers' batch APIs (OpenAI, Anthropic, Gemini: about half the price, results within 24 h): each round of the items' requests is one job; needs --out; running the same command again polls the same jobs")
      .option("--poll-interval <seconds>", "with --provider-batch: poll the jobs this often (default from 10 s growing to 60 s)")
      .option("--status", "with --out FILE, no tactic: show the provider batch jobs of FILE, their states and counts")
      .option("--cancel", "with --out FILE, no tactic: cancel the provider batch jobs of FILE still running")
      .option("--rerun-unknown", "when the same batch runs again: items that stopped mid-way run again the tool calls their stop cut short, even of tools not declared idempotent")
      .option("-q, --quiet", "no progress line; the summary only when something failed")
      .option("--no-log", "do not record the items' runs in the run store")
      .action(async (tactic: string | undefined, options: Record<string, unknown>, command: Command) => {
        const { batchCommand } = await import("./batch.js");
        await batchCommand(tactic, command.optsWithGlobals());
      });
  }

  if (wanted("test")) {
    program
      .command("test")
      .description("run test files (*.test.yaml): replay each case from its cassette, or run it live; assert on the answer, the tool calls, the cost")
      .argument("[paths...]", "test files, or folders to search for *.test.yaml / *.test.json (default: the current folder)")
      .option("--record", "run the cases that have no cassette live and write theirs (__cassettes__/ beside the test file)")
      .option("--update", "run every case live and write its cassette again")
      .option("--offline", "never call a model: a case without a cassette fails")
      .option("--filter <text>", "only the cases whose name (or `file › name`) contains this text")
      .option("--concurrency <n>", "cases running at once (default: the number of CPUs)")
      .option("--bail", "start no case after the first failure")
      .option("--json", "print the results as one JSON object on stdout")
      .option("--junit <file>", "write the results as JUnit XML (for CI: GitHub Actions, GitLab)")
      .option("--no-log", "do not record the cases' runs in the run store")
      .action(async (paths: string[], options: Record<string, unknown>, command: Command) => {
        const { testCommand } = await import("./test.js");
        await testCommand(paths, command.optsWithGlobals());
      });
  }

  if (wanted("worker")) {
    program
      .command("worker")
      .description("run the items of batches queued on Redis by `lllm batch --queue`, and the requests of `lllm serve --queue` (until Ctrl-C or SIGTERM, which let the running ones finish, for up to --drain-timeout)")
      .option("--queue <url>", "the Redis the batches are on (redis://[:password@]host:port)")
      .option("--concurrency <n>", "items running at once (default 4)")
      .option("-p, --package <dir>", "its packages: a batch's tactic and packages are looked for here (and in the settings' packages, ./lllm_packages, $LLLM_HOME/packages), never in a folder the batch names (repeatable)", collect)
      .option("--no-log", "do not record the items' runs in the run store")
      .option("--drain-timeout <seconds>", "on SIGTERM or Ctrl-C, how long running items may finish before they are cancelled and go back to the queue (default 25)")
      .action(async (options: Record<string, unknown>, command: Command) => {
        const { workerCommand } = await import("./worker.js");
        await workerCommand(command.optsWithGlobals());
      });
  }

  if (wanted("tools")) {
    const tools = program.command("tools").description("list, show and call the tools of packages");
    tools
      .command("list")
      .description("list the tools of the loaded packages with their refs")
      .option("-p, --package <dir>", "package folders to load (besides ./lllm_packages and $LLLM_HOME/packages) (repeatable)", collect)
      .option("--json", "print JSON")
      .action(async (options: Record<string, unknown>, command: Command) => {
        const { toolsListCommand } = await import("./tools.js");
        await toolsListCommand(command.optsWithGlobals());
      });
    tools
      .command("show")
      .description("print a tool as the model sees it (the to_tool() JSON)")
      .argument("<ref>", "a tool ref, e.g. weather.tools:get_weather, or a bare name")
      .option("-p, --package <dir>", "package folders to load (repeatable)", collect)
      .action(async (ref: string, options: Record<string, unknown>, command: Command) => {
        const { toolsShowCommand } = await import("./tools.js");
        await toolsShowCommand(ref, command.optsWithGlobals());
      });
    tools
      .command("call")
      .description("call a tool and print what the model would read back (result_str)")
      .argument("<ref>", "a tool ref or bare name")
      .option("-a, --args <json>", "arguments as a JSON object", "{}")
      .option("-p, --package <dir>", "package folders to load (repeatable)", collect)
      .option("--json", "print {schema_version, result} (the raw result) instead, and a failure as one JSON object")
      .action(async (ref: string, options: Record<string, unknown>, command: Command) => {
        const { toolsCallCommand } = await import("./tools.js");
        await toolsCallCommand(ref, command.optsWithGlobals());
      });
  }

  if (wanted("proxy")) {
    const proxy = program.command("proxy").description("list, document and call data-API proxies");
    proxy
      .command("list")
      .description("the proxies that can be activated (built-ins and those of the loaded packages)")
      .option("-p, --package <dir>", "package folders to load (repeatable)", collect)
      .option("--json", "print JSON")
      .action(async (options: Record<string, unknown>, command: Command) => {
        const { proxyListCommand } = await import("./proxy.js");
        await proxyListCommand(command.optsWithGlobals());
      });
    proxy
      .command("docs")
      .description("a proxy's API documentation, exactly as query_api_doc returns it to the model")
      .argument("[name]", "the proxy's path (default: every proxy)")
      .option("-p, --package <dir>", "package folders to load (repeatable)", collect)
      .option("--json", "print the definitions as JSON: {schema_version, proxies: [{path, name, description, endpoints}]}")
      .action(async (name: string | undefined, options: Record<string, unknown>, command: Command) => {
        const { proxyDocsCommand } = await import("./proxy.js");
        await proxyDocsCommand(name, command.optsWithGlobals());
      });
    proxy
      .command("call")
      .description("call an endpoint as CALL_API does and print the JSON result")
      .argument("<path>", "proxy/endpoint path, e.g. weather/current/Tokyo")
      .option("--params <json>", "parameters as a JSON object", "{}")
      .option("-p, --package <dir>", "package folders to load (repeatable)", collect)
      .option("--no-cache", "do not read or write the response cache")
      .option("--json", "print {schema_version, result} (a text answer too), and a failure as one JSON object")
      .action(async (callPath: string, options: Record<string, unknown>, command: Command) => {
        const { proxyCallCommand } = await import("./proxy.js");
        await proxyCallCommand(callPath, command.optsWithGlobals());
      });
  }

  if (wanted("exec")) {
    program
      .command("exec")
      .description("run Python (a file or standard input) in the agents' interpreter, with CALL_API for proxies")
      .option("--proxy <name>", "a proxy to activate (repeatable; default: all)", collect)
      .option("-f, --file <file>", "the Python file to run (default: standard input)")
      .option("-p, --package <dir>", "package folders to load (repeatable)", collect)
      .addOption(new Option("--sandbox <backend>", "the isolation of the code").choices(["auto", "bwrap", "gvisor", "none"]).default("auto"))
      .option("--timeout <seconds>", "time limit of the code", "60")
      .option("--no-cache", "do not read or write the proxies' response cache")
      .action(async (options: Record<string, unknown>, command: Command) => {
        const { execCommand } = await import("./exec.js");
        await execCommand(command.optsWithGlobals());
      });
  }

  if (wanted("a2a")) {
    const a2a = program.command("a2a").description("A2A (Agent2Agent): the agent card lllm serve serves");
    a2a
      .command("card")
      .description("print the agent card `lllm serve` serves for these tactics (A2A 1.0 JSON: a skill per tactic, the bearer scheme)")
      .argument("[targets...]", "tactic files, package refs (pkg.tactics:name) or package folders, as lllm serve takes them")
      .option("--url <url>", "the base URL clients reach the server at (default http://127.0.0.1:8080)")
      .option("--no-auth", "a server without a token (lllm serve --no-auth): the card names no security scheme")
      .option("-m, --model <name>", "use this model for every agent of every tactic")
      .option("-p, --package <dir>", "also load these package folders (repeatable)", collect)
      .action(async (targets: string[], options: Record<string, unknown>, command: Command) => {
        const { a2aCardCommand } = await import("./a2a.js");
        await a2aCardCommand(targets, command.optsWithGlobals());
      });
  }

  if (wanted("mcp")) {
    const mcp = program.command("mcp").description("list an MCP server's tools; serve a package over MCP");
    mcp
      .command("tools")
      .description("list the tools of an MCP server, to check a config by hand")
      .argument("<server...>", "a URL (Streamable HTTP), a quoted command line, or the command after --")
      // Repeatable single-value options: a variadic option would swallow the server spec that follows it.
      .option("--env <KEY=VALUE>", "environment of a stdio server (repeatable)", collect)
      .option("--header <Name: value>", "HTTP header (repeatable)", collect)
      .option("--bearer-token-env <name>", "an HTTP server's token: the environment variable holding it (sent as Authorization: Bearer)")
      .option("--json", "the tools as the model sees them")
      .action(async (server: string[], options: Record<string, unknown>, command: Command) => {
        const { mcpToolsCommand } = await import("./mcp.js");
        await mcpToolsCommand(server, command.optsWithGlobals());
      });
    mcp
      .command("serve")
      .description("serve a package over MCP (stdio, or Streamable HTTP with --http): its tools, tactics, prompts and resources")
      .argument("<dir>", "the package folder")
      .option("-p, --package <dir>", "also load these package folders (repeatable)", collect)
      .option("--http <[host:]port>", "serve over Streamable HTTP at http://HOST:PORT/mcp (host 127.0.0.1 by default; port 0: any free port)")
      .option("--token-env <name>", "with --http: clients must send the token in this environment variable (Authorization: Bearer); without it a token is made and printed")
      .option("--no-auth", "with --http on 127.0.0.1: require no token (any user of this machine can then call the tools)")
      .option("--max-sessions <n>", "with --http: the most client sessions open at once; a new one past it is refused with 503 (default 100)")
      .option("--idle-timeout <seconds>", "with --http: close a session after this many seconds without a request or an open stream (default 1800)")
      .action(async (dir: string, options: Record<string, unknown>, command: Command) => {
        const { mcpServeCommand } = await import("./mcp.js");
        await mcpServeCommand(dir, command.optsWithGlobals());
      });
  }

  if (wanted("serve")) {
    program
      .command("serve")
      .description("serve tactics over HTTP as OpenAI-compatible models (chat completions, responses) and as an A2A agent (/a2a), and packages' tools over MCP at /mcp")
      .argument("[targets...]", "tactic files, package refs (pkg.tactics:name) or package folders (all their tactics); default: the package in the current folder")
      .option("--http <[host:]port>", "the address to listen on (default 127.0.0.1:8080; port 0 picks a free one)")
      .option("--token-env <name>", "the variable holding the bearer token clients must send (default: a token made for the session, printed once)")
      .option("--no-auth", "no token at all (loopback only): any user of this machine can run the tactics")
      .option("--concurrency <n>", "runs at once (default: 4 times the CPU count)")
      .option("--max-waiting <n>", "requests waiting for a place past --concurrency before more are refused with 429 (default 100)")
      .option("--pending-ttl <seconds>", "how long a run paused at a client's tool calls waits for the results (default 600)")
      .option("--max-paused <n>", "runs kept paused at clients' tool calls or approvals at once; past that the one paused longest is cancelled (default 1000)")
      .option("--max-cost <usd>", "the most a request's run may spend, in US dollars (a client may lower it, never raise it)")
      .option("--max-tokens <n>", "the most tokens a request's run may use (a client may lower it)")
      .option("--max-duration <seconds>", "the longest a request's run may take (a client may lower it)")
      .addOption(new Option("--approve <which>", "calls to tools that need approval: run all, or refuse them to the model (default: none)").choices(["all", "none"]))
      .option("--cors-origin <origin>", "let browsers call from this origin (default: no CORS)")
      .option("--public-url <url>", "the URL clients reach this server at, for the A2A agent card (default: the address each request came to)")
      .option("--drain-timeout <seconds>", "on SIGTERM or Ctrl-C, how long runs in flight may finish before they are cancelled (default 30)")
      .option("-m, --model <name>", "use this model for every agent of every served tactic")
      .option("-p, --package <dir>", "also load these package folders (repeatable)", collect)
      .option("--no-log", "do not record the requests' runs in the run store")
      .option("--queue <url>", "run the requests on the workers of this Redis (lllm worker --queue URL, here or on other machines) instead of in this process")
      .action(async (targets: string[], options: Record<string, unknown>, command: Command) => {
        const { serveCommand } = await import("./serve.js");
        await serveCommand(targets, command.optsWithGlobals());
      });
  }

  if (wanted("logs")) {
    const logs = program
      .command("logs")
      .description("the run log: list runs newest first; show, replay, prune them")
      .option("-n, --number <n>", "how many runs (default 20)")
      .option("--tactic <name>", "only runs of this tactic (name or file)")
      .addOption(new Option("--status <status>", "only runs that ended so").choices(["running", "ok", "error", "interrupted", "budget", "crashed"]))
      .option("--since <age>", "only runs started in the last AGE (90s, 15m, 2h, 30d, 1w)")
      .option("--search <text>", "only runs whose input or output holds these words")
      .option("--served", "only runs `lllm serve` ran (requests to a served model)")
      .option("--json", "print the runs as JSON")
      .action(async (options: Record<string, unknown>, command: Command) => {
        const { logsListCommand } = await import("./logs.js");
        await logsListCommand(command.optsWithGlobals());
      });
    logs
      .command("show")
      .description("print a run as a transcript: prompts, model calls, tool calls, tokens, cost, timings")
      .argument("<id>", "a run id (or its first characters), or `last`")
      .option("--json", "the whole record as JSON")
      .action(async (id: string, options: Record<string, unknown>, command: Command) => {
        const { logsShowCommand } = await import("./logs.js");
        await logsShowCommand(id, command.optsWithGlobals());
      });
    logs
      .command("replay")
      .description("write a run's model turns as a scripted model file, to replay it offline as a test")
      .argument("<id>", "a run id (or its first characters), or `last`")
      .option("-o, --output <file>", "write to this file (default: standard output)")
      .option("--json", "print {schema_version, run_id, turns, agents} with the script (or the -o file it went to)")
      .action(async (id: string, options: Record<string, unknown>, command: Command) => {
        const { logsReplayCommand } = await import("./logs.js");
        await logsReplayCommand(id, command.optsWithGlobals());
      });
    logs
      .command("serve")
      .description("serve a read-only page of the runs (filters, timelines, programs) on 127.0.0.1, at the address it prints (with its token)")
      .option("--port <n>", "the port (default 8765; 0: any free port)")
      .option("--json", "print {schema_version, url} on stdout once the viewer listens")
      .action(async (options: Record<string, unknown>, command: Command) => {
        const { logsServeCommand } = await import("./logs.js");
        await logsServeCommand(command.optsWithGlobals());
      });
    logs
      .command("path")
      .description("print the run log's file")
      .option("--json", "print {schema_version, path}")
      .action(async (options: Record<string, unknown>, command: Command) => {
        const { logsPathCommand } = await import("./logs.js");
        await logsPathCommand(command.optsWithGlobals());
      });
    logs
      .command("prune")
      .description("delete old runs from the log (those --status, --tactic, --search and --served pick, when given)")
      .option("--older-than <age>", "delete runs started longer ago than AGE (e.g. 30d)")
      .option("--dry-run", "list the runs it would delete, and delete none")
      .action(async (options: Record<string, unknown>, command: Command) => {
        const { logsPruneCommand } = await import("./logs.js");
        await logsPruneCommand(command.optsWithGlobals());
      });
  }

  if (wanted("models")) {
    program
      .command("models")
      .description("list the provider prefixes, their key variables (set or not) and the models lllm knows")
      .option("--json", "print one JSON object")
      .action(async (options: { json?: boolean }) => {
        const { modelsCommand } = await import("./models.js");
        modelsCommand(options);
      });
  }

  if (wanted("init")) {
    program
      .command("init")
      .description("create a package that works at once: tools (TypeScript and command), a tactic, a prompt, an offline script, a test with its cassette, a tsconfig")
      .argument("[dir]", "the new package's folder (default: the current folder, which must be empty)")
      .addOption(new Option("-t, --template <name>", "what the package shows").choices(["agent", "code-action", "proxy"]).default("agent"))
      .option("--force", "write into a folder that is not empty (files of the same names are replaced)")
      .action(async (dir: string | undefined, options: { template?: string; force?: boolean }) => {
        const { initCommand } = await import("./init.js");
        initCommand(dir, options);
      });
  }

  if (wanted("completion")) {
    program
      .command("completion")
      .description("print a completion script for bash, zsh or fish (lllm help getting-started says where each goes)")
      .addArgument(new Argument("[shell]", "bash | zsh | fish").choices(["bash", "zsh", "fish"]))
      .addOption(new Option("--list <what>", "the words a completion asks for: models | tactics | runs").choices(["models", "tactics", "runs"]).hideHelp())
      .addOption(new Option("-p, --package <dir>", "with --list tactics: the packages given on the command line").argParser(collect).hideHelp())
      .action(async (shell: string | undefined, options: { list?: string; package?: string[] }) => {
        const { completionCommand } = await import("./completion.js");
        await completionCommand(shell, program, options);
      });
  }

  if (wanted("doctor")) {
    program
      .command("doctor")
      .description("check what lllm needs here (Node, python3, sandboxes, $LLLM_HOME, the run store, keys, servers) and how to fix each missing piece; exit 1 when something a given tactic needs is missing")
      .argument("[tactic]", "also check what this tactic needs: its models' keys and servers, Python and a sandbox for its code")
      .option("-m, --model <name>", "check for this model instead of each agent's")
      .option("-p, --package <dir>", "also load these package folders (repeatable)", collect)
      .option("--queue <url>", "also check that this Redis answers (redis://[:password@]host:port)")
      .option("--json", "print one JSON object: {schema_version, ok, checks: [{name, status, detail, fix}]}")
      .action(async (tactic: string | undefined, options: Record<string, unknown>, command: Command) => {
        const { doctorCommand } = await import("./doctor.js");
        await doctorCommand(tactic, command.optsWithGlobals());
      });
  }

  if (wanted("keys")) {
    const keys = program.command("keys").description("keep API keys in $LLLM_HOME/keys.json (0600), used where a key variable is read; the environment wins");
    keys
      .command("set")
      .description("store a key: the value is read from a prompt without echo, or from standard input")
      .argument("<name>", "the variable it stands for (OPENAI_API_KEY, a tactic's api_key_env), or a provider (openai, anthropic, …)")
      .action(async (name: string) => {
        const { keysSetCommand } = await import("./keys.js");
        await keysSetCommand(name);
      });
    keys
      .command("list")
      .description("the names of the stored keys (never their values)")
      .option("--json", "print JSON")
      .action(async (options: { json?: boolean }) => {
        const { keysListCommand } = await import("./keys.js");
        keysListCommand(options);
      });
    keys
      .command("get")
      .description("print a stored key's value (for scripts)")
      .argument("<name>", "the variable name, or a provider")
      .action(async (name: string) => {
        const { keysGetCommand } = await import("./keys.js");
        keysGetCommand(name);
      });
    keys
      .command("remove")
      .description("remove a stored key")
      .argument("<name>", "the variable name, or a provider")
      .action(async (name: string) => {
        const { keysRemoveCommand } = await import("./keys.js");
        keysRemoveCommand(name);
      });
    keys
      .command("path")
      .description("print the keys file's path")
      .action(async () => {
        const { keysPathCommand } = await import("./keys.js");
        keysPathCommand();
      });
  }

  if (wanted("add")) {
    program
      .command("add")
      .description("fetch a package (npm:NAME[@RANGE], git+URL[#REF][:SUBDIR], oci://REGISTRY/REPO:TAG, a tarball) into the cache; record it in the manifest and lllm.lock")
      .argument("<source>", "the package to add")
      .option("--as <alias>", "the name the project knows it by (in refs: alias.tools:name)")
      .option("--trust", "accept the code the package carries without asking (for scripts; read it first)")
      .option("--json", "print one JSON object")
      .action(async (source: string, options: { as?: string; trust?: boolean; json?: boolean }) => {
        const { addCommand } = await import("./packages.js");
        await addCommand(source, options);
      });
  }

  if (wanted("install")) {
    program
      .command("install")
      .description("fetch every package the manifest lists, as lllm.lock pins it, into the cache")
      .option("--frozen", "fail when the manifest and lllm.lock disagree, and never write the lock (for CI)")
      .option("--trust", "accept the code of packages not trusted in this home yet, without asking")
      .option("--json", "print one JSON object")
      .action(async (options: { frozen?: boolean; trust?: boolean; json?: boolean }) => {
        const { installCommand } = await import("./packages.js");
        await installCommand(options);
      });
  }

  if (wanted("remove")) {
    program
      .command("remove")
      .description("remove a package from the manifest and lllm.lock")
      .argument("<name>", "its alias, name or source")
      .option("--json", "print one JSON object")
      .action(async (name: string, options: { json?: boolean }) => {
        const { removeCommand } = await import("./packages.js");
        await removeCommand(name, options);
      });
  }

  if (wanted("update")) {
    program
      .command("update")
      .description("resolve a package (or all) again within its range or ref, and lock what it gives now")
      .argument("[name]", "its alias, name or source (default: every package)")
      .option("--trust", "accept new or changed code without asking")
      .option("--json", "print one JSON object")
      .action(async (name: string | undefined, options: { trust?: boolean; json?: boolean }) => {
        const { updateCommand } = await import("./packages.js");
        await updateCommand(name, options);
      });
  }

  if (wanted("list")) {
    program
      .command("list")
      .description("the project's packages: from where, at which version, the code they carry, who trusted it, and whether the cache holds them unchanged (exit 2 when one was modified since it was trusted: runs refuse it)")
      .option("--json", "print one JSON object")
      .action(async (options: { json?: boolean }) => {
        const { listCommand } = await import("./packages.js");
        await listCommand(options);
      });
  }

  if (wanted("outdated")) {
    program
      .command("outdated")
      .description("the packages whose source gives something newer than the lock has (npm versions, git refs, OCI tags)")
      .option("--json", "print one JSON object")
      .action(async (options: { json?: boolean }) => {
        const { outdatedCommand } = await import("./packages.js");
        await outdatedCommand(options);
      });
  }

  if (wanted("pack")) {
    program
      .command("pack")
      .description("pack a package folder into NAME-VERSION.tgz (every file listed; dot files, node_modules and links never packed); prints its path")
      .argument("[dir]", "the package's folder (default: the current one)")
      .option("-o, --out <file>", "where to write the archive")
      .option("--json", "print one JSON object")
      .action(async (dir: string | undefined, options: { out?: string; json?: boolean }) => {
        const { packCommand } = await import("./packages.js");
        await packCommand(dir, options);
      });
  }

  if (wanted("publish")) {
    program
      .command("publish")
      .description("publish a package folder to npm (with npm's own publish) or to an OCI registry; prints the source to add it by")
      .argument("[dir]", "the package's folder (default: the current one)")
      .requiredOption("--to <target>", "npm | oci://REGISTRY/REPO[:TAG]")
      .option("--json", "print one JSON object")
      .action(async (dir: string | undefined, options: { to: string; json?: boolean }) => {
        const { publishCommand } = await import("./packages.js");
        await publishCommand(dir, options);
      });
  }

  if (wanted("schema")) {
    program
      .command("schema")
      .description("print the JSON Schema of a file format, for editors (yaml-language-server)")
      .addArgument(new Argument("<kind>", "tactic | test | package | proxy | settings").choices(["tactic", "test", "package", "proxy", "settings"]))
      .action(async (kind: "tactic" | "test" | "package" | "proxy" | "settings") => {
        const { schemaCommand } = await import("./schema.js");
        await schemaCommand(kind);
      });
  }

  if (wanted("help")) {
    program
      .command("help")
      .description("a page of the documentation, cut for a terminal (lllm help lists the topics: getting-started, tactics, batch, testing, …), or a command's help")
      .argument("[topic...]", "a topic, or a command such as `run` or `tools list`")
      .action(async (words: string[]) => {
        const { helpCommand } = await import("./help.js");
        helpCommand(words, program);
      });
  }

  program.addOption(new Option("--no-color", "disable colour (NO_COLOR is honoured too)"));
  addExamples(program, paint);
  return program;
}

/** How `main` runs. */
export interface MainOptions {
  /**
   * Run inside a longer-lived process (the test suite runs the CLI's error cases so): no EPIPE handler on stdout
   * and no `process.exit()` backstop after the command. Everything else is as in the binary.
   */
  inProcess?: boolean;
}

/**
 * stdout could not be written. `lllm … | head` closes it early: that is not an error, just stop quietly. Anything
 * else (a full disk under `> answer.txt`, an I/O error) loses the output: said on stderr, exit 1 (or the run's own
 * failure code), not a crash with a stack trace.
 */
function stdoutFailed(error: NodeJS.ErrnoException): void {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  try {
    process.stderr.write(`lllm: error: could not write the output to stdout: ${error.message}\n`);
  } catch {
    // stderr is gone too: the exit code says it.
  }
  const code = process.exitCode;
  process.exit(typeof code === "number" && code !== 0 ? code : 1);
}

/**
 * Entry point of the `lllm` binary. Sets `process.exitCode` and resolves with it; never calls `process.exit()`
 * with work pending.
 */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  if (options.inProcess !== true) process.stdout.on("error", stdoutFailed);
  if (argv.includes("--no-color")) process.env.NO_COLOR = "1";
  registerEnvironmentSecrets(process.env);
  reserveStdout();
  // Tools' argument validators are kept as generated code between runs (ajv's compiler is slow to load).
  const cache = codeCacheFolder(); // LLLM_CODE_CACHE or $LLLM_HOME/cache, never a folder of another user's
  useValidatorCache(path.join(cache, "validators"));
  // TypeScript package files are transpiled once, into a folder of this user's own (not the shared temp folder).
  useTranspileCache(path.join(cache, "jiti"));
  useParsedYamlCache(path.join(cache, "yaml"));
  useCodeCache(path.join(cache, "v8"));
  const only = singleCommand(argv.slice(2));
  const program = buildProgram(only);
  // `chat --json` prints JSON lines (one per turn): its failure to start is one line too, which a reader of lines
  // takes whole. Every other command prints one object, indented.
  const jsonText = (value: unknown): string => (only.only === "chat" ? escapeJsonControlCharacters(JSON.stringify(value)) : JSON.stringify(value, null, 2));
  const verbose = argv.includes("--verbose") || argv.includes("-v");
  // Decided by the command's own parsed options once it runs; before that (a usage error), by the words given.
  let json = argv.includes("--json");
  program.hook("preAction", (_program, command) => {
    // With globals: `logs show X --json` gives --json to `logs` (which has it too), not to `show`.
    const options = command.optsWithGlobals<GlobalOptions & { json?: boolean }>();
    json = options.json === true;
    const top = command.parent?.parent ? command.parent.name() : command.name();
    applyEnvironment({
      ...(options.envFile ? { envFiles: options.envFile } : {}),
      keys: !WITHOUT_KEYS.has(top),
      ...(KEYS_IF_USABLE.has(top) ? { onKeysError: (error: ConfigError) => warn(`${error.message}: its keys count as not set here${error.hint ? ` (${error.hint})` : ""}`) } : {}),
    });
  });
  const stopWatching = failIfLoopDrains({ verbose, json: () => json });
  const signals = handleSignals();
  try {
    checkCommandWords(program, argv.slice(2));
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof cli().CommanderError) {
      // Help and version are successes; every other commander error is a usage error (exit 2).
      process.exitCode = error.exitCode === 0 || error.code === "commander.helpDisplayed" || error.code === "commander.version" ? 0 : 2;
      if (process.exitCode === 2 && json) writeOut(jsonText(failureJson(new ConfigError("usage", error.message.replace(/^error: /, "").trim()))));
    } else {
      process.exitCode = reportError(error, verbose);
      // Every --json command prints one JSON object, on failure too, so a pipeline reads data either way.
      if (json) writeOut(jsonText(failureJson(error)));
    }
  } finally {
    stopWatching();
    // After a signal the exit code says which one (130 Ctrl-C, 143 SIGTERM), however the command ended; the
    // handler stays until exit so that a second signal still quits at once.
    if (signals.exitCode !== undefined) process.exitCode = signals.exitCode;
    else signals.dispose();
    if (options.inProcess !== true) exitSoon();
  }
  return Number(process.exitCode ?? 0);
}

/** Top-level commands that read the whole command tree: `help` and `completion` describe every command. */
const WHOLE_TREE = new Set(["help", "completion"]);

/**
 * The top-level command the arguments name, when it is one that needs no other (see `BuildProgramOptions.only`):
 * the first word that is not a global option or its value. Anything else (no command, `--help` of the program, a
 * word that names no command, which gets a did-you-mean from the whole tree) builds every command.
 */
function singleCommand(args: string[]): BuildProgramOptions {
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === "--env-file") {
      index += 1;
      continue;
    }
    // The program's own help lists every command.
    if (arg === "-h" || arg === "--help") return {};
    if (arg.startsWith("-") && arg !== "-" && arg !== "--") continue;
    const word = arg === "--" ? args[index + 1] : arg;
    return word !== undefined && TOP_LEVEL_COMMANDS.has(word) && !WHOLE_TREE.has(word) ? { only: word } : {};
  }
  return {};
}

/** How long the process may stay after the command has finished, before it exits anyway. */
const EXIT_BACKSTOP_MS = 2000;

/**
 * lllm must end when its work is done, whatever its children do. The mechanisms are process groups that are
 * killed and pipes that are never waited on; this backstop covers a handle they miss (it is `unref`ed, so it
 * never delays a process that exits on its own). The `exit` hooks still kill every kernel and server.
 */
function exitSoon(): void {
  setTimeout(() => {
    // Output still on its way to a slow reader (a large answer into a pipe) is the command's own: exiting now
    // would cut it. Wait until it has been taken, then give the backstop its time again.
    const pending = [process.stdout, process.stderr].find((stream) => stream.writableLength > 0 && !stream.destroyed);
    if (pending) pending.once("drain", exitSoon).once("error", exitSoon);
    else process.exit();
  }, EXIT_BACKSTOP_MS).unref();
}
