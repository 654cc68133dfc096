import { auth, extractWWWAuthenticateParams, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { checkOAuthUrl } from "./checkOAuthUrl.js";
import { SignInNeeded } from "./LllmOAuthProvider.js";

/** A step of the OAuth flow failed (discovery, registration, the token request): the cause says which and why. */
export class OAuthFlowError extends Error {}

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
        throw new OAuthFlowError(error instanceof Error ? error.message : String(error), { cause: error });
      }
      if (result !== "AUTHORIZED") break;
      response = await send();
    }
    return response;
  };
}
