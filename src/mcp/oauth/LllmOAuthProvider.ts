import { randomBytes } from "node:crypto";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { checkOAuthUrl } from "./checkOAuthUrl.js";
import { freeLoopbackPort, waitForCallback } from "./LoopbackCallback.js";
import type { OAuthStore } from "./OAuthStore.js";

/** How a browser sign-in reaches the user; absent when nobody can sign in (no terminal, no `$BROWSER`). */
export interface SignIn {
  /** Show `url` to the user (open a browser, print it). */
  open(url: string): void;
  /** How long to wait for the browser to come back. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** Thrown by `redirectToAuthorization` when a sign-in is needed and nobody can do it. */
export class SignInNeeded extends Error {}

/**
 * lllm's OAuth client for one MCP server (authorization code with PKCE): the SDK's `auth()` drives discovery,
 * registration and the token exchange through it. Client registrations and tokens live in an `OAuthStore`; a
 * pre-registered client comes from the config. The redirect URI is a loopback callback (`127.0.0.1:<port>`),
 * the same port every time for a stored registration. `redirectToAuthorization` opens the browser and waits for
 * the callback; the code it brings is then taken with `takeAuthorizationCode()`.
 */
export class LllmOAuthProvider implements OAuthClientProvider {
  readonly #store: OAuthStore;
  readonly #port: number;
  readonly #preRegistered: OAuthClientInformationMixed | undefined;
  readonly #scope: string | undefined;
  readonly #signIn: SignIn | undefined;
  readonly clientMetadataUrl?: string;
  #codeVerifier: string | undefined;
  #state: string | undefined;
  #code: string | undefined;

  private constructor(options: { store: OAuthStore; port: number; preRegistered?: OAuthClientInformationMixed | undefined; scope?: string | undefined; signIn?: SignIn | undefined; clientMetadataUrl?: string | undefined }) {
    this.#store = options.store;
    this.#port = options.port;
    this.#preRegistered = options.preRegistered;
    this.#scope = options.scope;
    this.#signIn = options.signIn;
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
    if (options.preRegistered === undefined) this.saveClientInformation = (clientInformation) => this.#store.update({ client_information: clientInformation });
  }

  static async create(options: { store: OAuthStore; preRegistered?: OAuthClientInformationMixed | undefined; scope?: string | undefined; signIn?: SignIn | undefined; clientMetadataUrl?: string | undefined }): Promise<LllmOAuthProvider> {
    const registered = options.store.state.client_information as { redirect_uris?: unknown } | undefined;
    const stored = Array.isArray(registered?.redirect_uris) ? /^http:\/\/127\.0\.0\.1:(\d+)\/callback$/.exec(String(registered.redirect_uris[0])) : null;
    const port = stored ? Number(stored[1]) : await freeLoopbackPort();
    return new LllmOAuthProvider({ ...options, port });
  }

  get redirectUrl(): string {
    return `http://127.0.0.1:${this.#port}/callback`;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "lllm",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: this.#preRegistered?.client_secret ? "client_secret_basic" : "none",
      ...(this.#scope ? { scope: this.#scope } : {}),
    };
  }

  state(): string {
    this.#state = randomBytes(16).toString("base64url");
    return this.#state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#preRegistered ?? this.#store.state.client_information;
  }

  /**
   * Keeps a client registered dynamically. Absent for a pre-registered client: the SDK then never registers another,
   * so a pre-registered client whose `issuer` is not the authorization server the MCP server names stops there,
   * instead of registering with that server and opening the browser on its sign-in page.
   */
  readonly saveClientInformation?: (clientInformation: OAuthClientInformationMixed) => void;

  tokens(): OAuthTokens | undefined {
    return this.#store.state.tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#store.update({ tokens });
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const signIn = this.#signIn;
    if (!signIn) throw new SignInNeeded("a browser sign-in is needed");
    // The address comes from the server's metadata: only https (http on this machine) reaches the browser.
    checkOAuthUrl(authorizationUrl, "the authorization endpoint");
    const state = authorizationUrl.searchParams.get("state") ?? this.#state ?? "";
    this.#code = await waitForCallback({ port: this.#port, state, timeoutMs: signIn.timeoutMs, signal: signIn.signal, onListening: () => signIn.open(authorizationUrl.toString()) });
  }

  /** The code the last browser sign-in brought back (once). */
  takeAuthorizationCode(): string | undefined {
    const code = this.#code;
    this.#code = undefined;
    return code;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.#codeVerifier === undefined) throw new Error("no PKCE code verifier was saved");
    return this.#codeVerifier;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "all" || scope === "tokens") this.#store.update({ tokens: undefined });
    if (scope === "all" || scope === "client") this.#store.update({ client_information: undefined });
    if (scope === "all" || scope === "verifier") this.#codeVerifier = undefined;
  }
}
