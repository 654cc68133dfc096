import { ClientCredentialsProvider, PrivateKeyJwtProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { McpServerConfig } from "../../config/TacticConfig.js";
import { ConfigError } from "../../errors.js";
import { registerSecret } from "../../util/redact.js";
import { LllmOAuthProvider, type SignIn } from "./LllmOAuthProvider.js";
import { OAuthStore } from "./OAuthStore.js";

/**
 * The OAuth client of a `url` server: a machine client for `grant: client_credentials` (a secret, or a private key
 * signing a JWT; nothing stored), else lllm's browser sign-in client, pre-registered when `client_id` is given and
 * registered dynamically otherwise, with its registration and tokens kept in `$LLLM_HOME/mcp/oauth`.
 */
export async function createOAuthProvider(config: McpServerConfig, options: { env: NodeJS.ProcessEnv; home: string; signIn?: SignIn | undefined }): Promise<OAuthClientProvider> {
  const oauth = config.oauth ?? {};
  const secretOf = (key: "client_secret_env" | "private_key_env"): string | undefined => {
    const name = oauth[key];
    if (name === undefined) return undefined;
    const value = options.env[name];
    if (!value) throw new ConfigError("mcp_oauth_secret_missing", `MCP server \`${config.name}\`: the environment variable \`${name}\` (oauth.${key}) is not set`, { hint: `Set ${name} before the run.` });
    // A secret by declaration, whatever the variable is called: removed from every text lllm shows or keeps.
    registerSecret(value);
    return value;
  };
  const secret = secretOf("client_secret_env");
  if (oauth.grant === "client_credentials") {
    const privateKey = secretOf("private_key_env");
    if (oauth.client_id === undefined || (secret === undefined && privateKey === undefined) || oauth.issuer === undefined) {
      // Without `issuer`, the MCP server's metadata decides which authorization server receives the client's secret
      // or signed assertion: a hostile or compromised MCP server could name its own and collect them.
      throw new ConfigError("mcp_oauth_invalid", `MCP server \`${config.name}\`: \`grant: client_credentials\` needs \`client_id\`, \`client_secret_env\` or \`private_key_env\`, and \`issuer\` (the authorization server the credentials are for)`, {
        hint: "e.g. oauth: {grant: client_credentials, client_id: my-agent, client_secret_env: MY_AGENT_SECRET, issuer: https://auth.example.com} (the issuer URL is in the authorization server's metadata)",
      });
    }
    const common = { clientId: oauth.client_id, expectedIssuer: oauth.issuer, ...(oauth.scope ? { scope: oauth.scope } : {}) };
    if (privateKey !== undefined) return new PrivateKeyJwtProvider({ ...common, privateKey, algorithm: oauth.signing_algorithm ?? "ES256" });
    return new ClientCredentialsProvider({ ...common, clientSecret: secret! });
  }
  const store = new OAuthStore({ home: options.home, server: `${config.url}${oauth.client_id ? `#${oauth.client_id}` : ""}` });
  return LllmOAuthProvider.create({
    store,
    // Stamped with its issuer when one is given: the SDK then presents it to that authorization server alone.
    preRegistered: oauth.client_id === undefined ? undefined : { client_id: oauth.client_id, ...(secret !== undefined ? { client_secret: secret } : {}), ...(oauth.issuer !== undefined ? { issuer: oauth.issuer } : {}) },
    scope: oauth.scope,
    signIn: options.signIn,
    clientMetadataUrl: oauth.client_metadata_url,
  });
}
