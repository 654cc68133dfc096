import type childProcess from "node:child_process";
import { requireNow } from "../../util/lazyModule.js";
import { splitCommandLine } from "../splitCommandLine.js";

/**
 * Show the user an authorization URL: `$BROWSER <url>` when the user named a browser, else `xdg-open`/`open` when
 * there is a display, and always the URL on stderr (`write`), so a user on a remote terminal can open it elsewhere.
 * The URL holds no secret (PKCE keeps the verifier here); it is printed so a person can act on it.
 */
export function openBrowser(url: string, options: { env: NodeJS.ProcessEnv; write: (line: string) => void }): void {
  // Only web addresses go to a browser program: xdg-open would open `smb://` or `file:` with whatever handles it.
  // (The sign-in refuses such an address before it gets here; this holds for any other caller.)
  if (!/^https?:\/\//i.test(url)) {
    options.write(`lllm: not opening ${JSON.stringify(url)}: not an http(s) address`);
    return;
  }
  options.write(`Open this URL to sign in: ${url}`);
  const browser = options.env.BROWSER?.trim();
  const argv = browser ? splitCommandLine(browser) : process.platform === "darwin" ? ["open"] : options.env.DISPLAY || options.env.WAYLAND_DISPLAY ? ["xdg-open"] : undefined;
  if (!argv || argv.length === 0) return;
  const [command, ...args] = argv;
  // child_process is `require`d here, not imported: the CLI's MCP hooks are set up for every run, a browser rarely opened.
  const { spawn } = requireNow<typeof childProcess>("node:child_process");
  const child = spawn(command!, [...args, url], { stdio: "ignore", env: options.env });
  child.on("error", () => {}); // the URL is on stderr already
  child.unref();
}
