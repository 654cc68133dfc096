import { isLoopbackHost } from "../serve/httpGuard.js";

/** An address of the OAuth flow lllm refuses to use: the message says which and why. */
export class UnsafeOAuthUrl extends Error {}

const ONLY = "lllm signs in only over https (or plain http on this machine: localhost, 127.0.0.1, [::1])";

/**
 * Refuse an address of the OAuth flow that is not https, or plain http on this machine. A server's metadata names
 * these addresses, and lllm follows them with the user's browser and credentials: an `authorization_endpoint` of
 * `smb://…` or `file:…` handed to `$BROWSER`/xdg-open would make the desktop open a share or a file; an
 * authorization server on plain http elsewhere would see the code, the PKCE verifier and the tokens in clear text
 * (OAuth 2.1 and MCP require https for every authorization server endpoint). `what` names the address in the message.
 */
export function checkOAuthUrl(address: string | URL, what: string): URL {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new UnsafeOAuthUrl(`${what} ${JSON.stringify(String(address))} is not a URL`);
  }
  // Without the query: an authorization URL carries the PKCE challenge and state, which need not be shown.
  const shown = JSON.stringify(`${url.protocol}//${url.host}${url.pathname}`);
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UnsafeOAuthUrl(`${what} ${shown} is not an https address; ${ONLY}, and opens nothing else in the browser`);
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) throw new UnsafeOAuthUrl(`${what} ${shown} is plain http on another machine; ${ONLY}`);
  return url;
}
