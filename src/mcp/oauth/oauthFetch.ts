import { auth, discoverAuthorizationServerMetadata, discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { checkOAuthUrl } from "./checkOAuthUrl.js";
import { SignInNeeded } from "./LllmOAuthProvider.js";

/** A step of the OAuth flow failed (discovery, registration, the token request): the cause says which and why. */
export class OAuthFlowError extends Error {}

/**
 * A server answered 401 and offers no OAuth (no protected-resource metadata, no authorization-server metadata): it
 * wants a token it was not given. `serverMessage` is what its 401 said (its JSON-RPC error message, or its short
 * text), for the user: lllm's own server says there how to send the token.
 */
export class OAuthNotOffered extends Error {
  readonly status: number;
  readonly serverMessage: string | undefined;
  constructor(status: number, serverMessage: string | undefined) {
    super(`the server answered HTTP ${status}${serverMessage ? ` (${JSON.stringify(serverMessage)})` : ""} and offers no OAuth sign-in`);
    this.status = status;
    this.serverMessage = serverMessage;
  }
}

/** Authorization rounds for one request: a first sign-in, then at most two step-ups (the suite allows three). */
const MAX_AUTH_ROUNDS = 3;

/** A provider that may hold the code of a browser sign-in it just completed. */
type Provider = OAuthClientProvider & { takeAuthorizationCode?: () => string | undefined };

/**
 * `fetch` for an OAuth-protected MCP server: every request carries the stored access token; a 401, or a 403 with
 * `insufficient_scope` (step-up), runs the SDK's `auth()` (discovery, registration, token request or refresh) and,
 * when it needs a browser, waits for the sign-in, finishes with the code, and sends the request again. Unlike the
 * SDK's transports, which stop at "redirect needed", the request that needed the sign-in goes on afterwards, so a
 * tool call that needs a wider scope just works. Bounded: a server that keeps refusing ends in its own answer.
 */
export function oauthFetch(provider: Provider, serverUrl: URL, next: FetchLike, options: { scope?: string | undefined } = {}): FetchLike {
  return async (input, init) => {
    const send = async (): Promise<Response> => {
      const headers = new Headers(init?.headers);
      const tokens = await provider.tokens();
      if (tokens) headers.set("authorization", `Bearer ${tokens.access_token}`);
      return next(input, { ...init, headers });
    };
    let response = await send();
    let lastChallenge: string | null = null;
    for (let round = 0; round < MAX_AUTH_ROUNDS; round++) {
      const { resourceMetadataUrl, scope, error } = extractWWWAuthenticateParams(response);
      const stepUp = response.status === 403 && error === "insufficient_scope";
      if (response.status !== 401 && !stepUp) break;
      const challenge = response.headers.get("www-authenticate");
      // The same refusal after a step-up: asking again would loop.
      if (stepUp && challenge === lastChallenge) break;
      lastChallenge = challenge;
      const refusal = round === 0 && response.status === 401 ? await refusalMessage(response) : undefined;
      await response.body?.cancel().catch(() => {});
      // Every address of the flow (metadata, registration, token), however the server's metadata names it: https, or
      // http on this machine. A refusal is thrown, not answered: the SDK would take a failed discovery for "none".
      const guarded: FetchLike = (url, init) => {
        checkOAuthUrl(url instanceof Request ? url.url : url, "the authorization server's address");
        return next(url, init);
      };
      const request = { serverUrl, resourceMetadataUrl, scope: scope ?? options.scope, fetchFn: guarded };
      let result;
      try {
        result = await auth(provider, request);
        if (result === "REDIRECT") {
          const authorizationCode = provider.takeAuthorizationCode?.();
          if (authorizationCode === undefined) break;
          result = await auth(provider, { ...request, authorizationCode });
        }
      } catch (error) {
        if (error instanceof SignInNeeded) throw error;
        // A server that wants a plain token offers no OAuth: the SDK then tries the default endpoints on its origin
        // and fails on their 404s. What the user needs is the server's own 401 message, not that failure.
        if (round === 0 && response.status === 401 && resourceMetadataUrl === undefined && !(await offersOAuth(serverUrl, next))) {
          throw new OAuthNotOffered(401, refusal);
        }
        throw new OAuthFlowError(error instanceof Error ? error.message : String(error), { cause: error });
      }
      if (result !== "AUTHORIZED") break;
      response = await send();
    }
    return response;
  };
}

/** The message of a refusal, for the user: a JSON-RPC `error.message`, an OAuth `error_description`, or short plain text. */
async function refusalMessage(response: Response): Promise<string | undefined> {
  let text: string;
  try {
    text = (await response.clone().text()).slice(0, 4096).trim();
  } catch {
    return undefined;
  }
  if (text === "") return undefined;
  try {
    const body = JSON.parse(text) as { error?: unknown; error_description?: unknown; message?: unknown };
    const error = body.error as { message?: unknown } | string | undefined;
    const message = typeof error === "object" && error !== null && typeof error.message === "string" ? error.message : typeof body.error_description === "string" ? body.error_description : typeof body.message === "string" ? body.message : typeof error === "string" ? error : undefined;
    return message?.slice(0, 300);
  } catch {
    // An HTML error page says nothing useful on a terminal.
    return /^\s*</.test(text) || text.length > 300 ? undefined : text;
  }
}

/**
 * Whether the server describes itself as an OAuth-protected resource (RFC 9728) or its origin serves
 * authorization-server metadata. Only the server's own origin is asked.
 */
async function offersOAuth(serverUrl: URL, next: FetchLike): Promise<boolean> {
  try {
    await discoverOAuthProtectedResourceMetadata(serverUrl, {}, next);
    return true;
  } catch (error) {
    if (!(error instanceof Error && /does not implement/.test(error.message))) return true; // there but broken: the flow's own error says more
  }
  try {
    return (await discoverAuthorizationServerMetadata(new URL("/", serverUrl), { fetchFn: next })) !== undefined;
  } catch {
    return true;
  }
}
