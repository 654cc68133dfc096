import type { ProxyConfig } from "../config/index.js";
import { formatTemplate } from "../prompts/index.js";
import type { ProxyManager } from "../proxies/index.js";
import { PythonKernel, type HostFunction, type IsolationOptions } from "../sandbox/index.js";
import { tool, type FunctionTool } from "../tools/index.js";
import type { RunScope } from "./RunScope.js";

/** The defaults of the `proxy:` block (seed Step 14). */
export const PROXY_DEFAULTS = { max_output_chars: 5000, truncation_indicator: "... (truncated)", timeout: 60 } as const;

/**
 * The built-in instruction block appended to the system prompt of an agent with proxies. `{api_directory}` is
 * every endpoint of every activated proxy; a custom `prompt_template` without it keeps the prompt short and the
 * agent reads documentation through query_api_doc only.
 */
export const INTERPRETER_TEMPLATE = `

## Data APIs
You can use the data APIs listed below. Read an API's documentation with query_api_doc(proxy_name) before you use it.
Run Python with run_python(code): the interpreter keeps its variables between calls, and CALL_API(path, params) is already defined. The path is "<proxy>/<endpoint>" with any {{placeholders}} filled in (for example CALL_API("weather/current/Tokyo", {{}})), params is a dict, and the result is the API's JSON as Python values. Only what you print comes back; output longer than {max_output_chars} characters is cut and ends with "{truncation_indicator}". Fetch, join and compute in Python, then print the results you need.

{api_directory}`;

export const DOCS_ONLY_TEMPLATE = `

## Data APIs
You can use the data APIs listed below. Read an API's documentation with query_api_doc(proxy_name); the endpoints are called from code as CALL_API(path, params), where the path is "<proxy>/<endpoint>" with any {{placeholders}} filled in.

{api_directory}`;

export interface ProxyToolsOptions {
  manager: ProxyManager;
  config: ProxyConfig;
  isolation: Partial<IsolationOptions>;
  scope: RunScope;
  onWarning: (message: string) => void;
}

/** The `query_api_doc` and (with `exec_env: interpreter`) `run_python` tools, and the text for the system prompt. */
export function proxyTools(options: ProxyToolsOptions): { tools: FunctionTool[]; instructions: string } {
  const { manager, config } = options;
  const interpreter = config.exec_env === "interpreter";
  const maxOutputChars = config.max_output_chars ?? PROXY_DEFAULTS.max_output_chars;
  const truncationIndicator = config.truncation_indicator ?? PROXY_DEFAULTS.truncation_indicator;
  const template = config.prompt_template ?? (interpreter ? INTERPRETER_TEMPLATE : DOCS_ONLY_TEMPLATE);
  const instructions = formatTemplate(template, { api_directory: manager.retrieveApiDocs(), max_output_chars: String(maxOutputChars), truncation_indicator: truncationIndicator }, { path: "proxy.prompt_template" });

  const available = manager.available();
  const tools: FunctionTool[] = [
    tool({
      name: "query_api_doc",
      description: "Return the documentation of a data API: its endpoints, their parameters with example values, and example responses.",
      parameters: { proxy_name: { type: "string", enum: available, description: "The API's name, as listed in the API directory" } },
      run: ({ proxy_name }) => manager.retrieveApiDocs(String(proxy_name)),
    }),
  ];
  if (interpreter) {
    let kernel: Promise<PythonKernel> | undefined;
    const start = (): Promise<PythonKernel> => {
      kernel ??= PythonKernel.start({
        ...callApiKernelOptions(manager),
        maxOutputChars,
        truncationIndicator,
        timeout: config.timeout ?? PROXY_DEFAULTS.timeout,
        isolation: options.isolation,
        onWarning: options.onWarning,
      }).then((started) => {
        options.scope.defer(() => started.close());
        return started;
      });
      return kernel;
    };
    tools.push(
      tool({
        name: "run_python",
        description: "Run Python code in a persistent interpreter where CALL_API(path, params) is available. Variables persist between calls. Only printed output is returned.",
        parameters: { code: { type: "string", description: "The Python code to run" } },
        run: async ({ code }, context) => {
          // An abort (Ctrl-C) kills the kernel at once: a cell may run for as long as its timeout allows.
          const result = await (await start()).execute(String(code), { signal: context.signal });
          // A timeout is an error for the loop (seed Step 13); other exceptions are tracebacks the model can fix.
          if (result.error?.type === "TimeoutError" || result.error?.type === "KernelDied") throw new Error(result.output.trim() || result.error.message);
          return result.output;
        },
      }),
    );
  }
  return { tools, instructions };
}

const CALL_API_PRELUDE = `import lllm_bridge as _lllm_bridge

def CALL_API(path, params=None):
    """Call a data API endpoint: CALL_API("weather/current/Tokyo", {}). Returns the JSON response as Python values."""
    return _lllm_bridge.call("CALL_API", {"path": path, "params": params or {}})
`;

/**
 * What a kernel needs to offer CALL_API(path, params): the Python function (the prelude) and the host function it
 * calls over the bridge, which sends the call through `manager` (keys added host-side). Shared by `run_python`,
 * the notebook pattern and `lllm exec`.
 */
export function callApiKernelOptions(manager: ProxyManager): { prelude: string; hostFunctions: Record<string, HostFunction> } {
  return {
    prelude: CALL_API_PRELUDE,
    hostFunctions: {
      CALL_API: (args) => {
        const { path, params } = args as { path: string; params?: Record<string, unknown> };
        return manager.call(path, params ?? {});
      },
    },
  };
}
