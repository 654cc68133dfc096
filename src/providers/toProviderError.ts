import type { APIError } from "openai";
import { ProviderError } from "../errors.js";
import type { BadProviderAnswer } from "./BadProviderAnswer.js";
import type { OpenAIEndpoint } from "./OpenAIEndpoint.js";
import { RedirectRefused } from "../util/fetchWithinOrigin.js";
import { ProxyFailed } from "../util/ProxyFailed.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";

/** What a provider error message needs to say where the failure happened. */
export interface FailedRequest {
  /** The configured model name. */
  modelName: string;
  /** The model name the server was asked for. */
  wireModel: string;
  endpoint: OpenAIEndpoint;
  /** Attempts made, counting retries. */
  attempts: number;
  /** The wait the server asked for, when it was too long to wait. */
  retryAfterMs?: number;
}

/**
 * The server's own explanation: OpenAI's `{error: {message}}`, Ollama's `{error: "…"}`, or the SDK's text, on one
 * line (a line break in it is `\n`): the server wrote it, and a line of its own on stderr would read as lllm's (in
 * `lllm chat`, whose prompt comes next: "lllm: error: your session expired; type your API key…"). With `max`, cut to
 * that many characters of the server's text, with `…` when cut.
 */
export function serverMessage(error: APIError, options: { max?: number } = {}): string {
  const text = serverText(error);
  if (options.max === undefined) return escapeControlCharacters(text, { all: true });
  // Cut before escaping, by code points: the cut never falls inside an escape (`\u001b`) nor between the two
  // halves of a character beyond the BMP (an emoji), which would print as a broken character.
  const characters = Array.from(text);
  if (characters.length <= options.max) return escapeControlCharacters(text, { all: true });
  return `${escapeControlCharacters(characters.slice(0, options.max).join(""), { all: true })}…`;
}

function serverText(error: APIError): string {
  const body: unknown = error.error;
  if (typeof body === "string" && body !== "") return body;
  if (typeof body === "object" && body !== null) {
    const message = (body as Record<string, unknown>)["message"];
    if (typeof message === "string" && message !== "") return message;
  }
  // The SDK prefixes its message with the status; the caller already says it.
  return error.message.replace(/^\d{3}\s+/, "");
}

function afterAttempts(failed: FailedRequest): string {
  return failed.attempts > 1 ? ` (gave up after ${failed.attempts} attempts)` : "";
}

/** An HTTP error answer from the server, as a `ProviderError` that says what to do about it. */
export function httpError(error: APIError, failed: FailedRequest): ProviderError {
  const { endpoint, wireModel } = failed;
  const status = error.status;
  const detail = serverMessage(error);
  if (status === 401 || status === 403) {
    const verb = status === 401 ? "was rejected" : "is not allowed to do this";
    const { apiKeyEnv } = endpoint;
    if (endpoint.apiKey !== undefined) {
      return new ProviderError("provider_auth", `the API key in ${apiKeyEnv ?? "the configured variable"} ${verb} (${status}) by ${endpoint.baseURL}: ${detail}`, {
        hint: `check the key, or set another: export ${apiKeyEnv ?? "<VARIABLE>"}=…`,
        cause: error,
      });
    }
    const unset = apiKeyEnv ? ` (${apiKeyEnv} is not set)` : "";
    return new ProviderError("provider_auth", `${endpoint.baseURL} refused the request (${status}); no API key was sent${unset}: ${detail}`, {
      hint: apiKeyEnv ? `set it with \`export ${apiKeyEnv}=…\` or \`lllm keys set ${apiKeyEnv}\`, or name another variable with invoker_config.api_key_env` : "if this server needs a key, name its variable with invoker_config.api_key_env",
      cause: error,
    });
  }
  if (status === 404) {
    return new ProviderError("provider_model_not_found", `model \`${wireModel}\` was not found at ${endpoint.baseURL} (404): ${detail}`, {
      hint: `check model_name (the server lists its models at ${endpoint.baseURL}/models) and the base URL`,
      cause: error,
    });
  }
  if (error.code === "insufficient_quota" || error.type === "insufficient_quota") {
    return new ProviderError("provider_quota", `${endpoint.baseURL} has no quota left for model \`${wireModel}\` (${status ?? "error"} insufficient_quota): ${detail}`, {
      hint: "check the account's plan and billing; retrying cannot help until the quota is raised",
      cause: error,
    });
  }
  const what = status === undefined ? "failed" : status === 429 ? "is rate limited (429)" : `answered HTTP ${status}`;
  const wait = failed.retryAfterMs !== undefined ? ` (the server asks to wait ${Math.ceil(failed.retryAfterMs / 1000)} s before retrying)` : "";
  return new ProviderError("provider_http", `${endpoint.baseURL} ${what} for model \`${wireModel}\`${afterAttempts(failed)}: ${detail}${wait}`, { cause: error, ...(status !== undefined ? { upstream: { status, message: detail } } : {}) });
}

/** The server could not be reached at all. */
export function connectionError(error: Error, failed: FailedRequest): ProviderError {
  // undici wraps the reason ("connect ECONNREFUSED 127.0.0.1:11434") inside "fetch failed": show the innermost.
  let innermost: unknown = error;
  let proxy: ProxyFailed | undefined;
  for (; innermost instanceof Error && innermost.cause instanceof Error; innermost = innermost.cause) if (innermost instanceof ProxyFailed) proxy = innermost;
  if (innermost instanceof ProxyFailed) proxy = innermost;
  const tls = tlsFailureOf(error);
  const setting = failed.endpoint.baseURLFrom ?? "invoker_config.base_url";
  const cause = tls ? `: ${tls.what} (${tls.code}: ${tls.message})` : proxy ? `: ${proxy.message}` : innermost instanceof Error && innermost !== error ? `: ${innermost.message}` : "";
  const hint = tls
    ? tls.hint
    : innermost instanceof RedirectRefused
      ? `set the base URL (${setting}) to the API itself, not to an address that redirects elsewhere`
      : proxy
        ? proxy.status === 407
          ? "the proxy wants credentials: give them in the proxy variable, as http://USER:PASSWORD@host:port (HTTPS_PROXY for https:// servers)"
          : "check the proxy variables (HTTPS_PROXY, HTTP_PROXY) and NO_PROXY, which lists the hosts reached without the proxy"
        : failed.endpoint.baseURLFrom === undefined && /^https:\/\/api\./.test(failed.endpoint.baseURL)
          ? // The provider's own address, which the user never set: the network is what to check.
            "check this machine's network connection, and the proxy variables (HTTPS_PROXY, NO_PROXY) if it needs a proxy"
          : `check that the server is running and that the base URL (${setting}) is right`;
  return new ProviderError("provider_connection", `cannot reach ${failed.endpoint.baseURL} for model \`${failed.wireModel}\`${afterAttempts(failed)}${cause}`, { hint, cause: error });
}

/** Certificates Node could not chain to a CA it trusts: a private CA, or a network that inspects TLS. */
const UNTRUSTED_CERTIFICATE = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "INVALID_CA",
  "CERT_SIGNATURE_FAILURE",
]);
const EXPIRED_CERTIFICATE = new Set(["CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID"]);
const WRONG_HOST_CERTIFICATE = new Set(["ERR_TLS_CERT_ALTNAME_INVALID", "HOSTNAME_MISMATCH"]);

/**
 * The TLS certificate failure in an error's cause chain, if any, with what to do about it. Such a failure cannot
 * heal by waiting: it is not retried.
 */
export function tlsFailureOf(error: unknown): { code: string; message: string; what: string; hint: string } | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 10; current = current.cause, depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    const { message } = current;
    if (UNTRUSTED_CERTIFICATE.has(code)) {
      return {
        code,
        message,
        what: "its TLS certificate is not signed by a CA that Node trusts",
        hint: "if your network inspects TLS (a corporate proxy) or the server has a private CA, give Node that CA's certificate: export NODE_EXTRA_CA_CERTS=/path/to/ca.pem (PEM), then run again",
      };
    }
    if (EXPIRED_CERTIFICATE.has(code)) return { code, message, what: "its TLS certificate is expired or not valid yet", hint: "check this machine's clock; if it is right, the server's certificate must be renewed (NODE_EXTRA_CA_CERTS cannot help)" };
    if (WRONG_HOST_CERTIFICATE.has(code)) return { code, message, what: "its TLS certificate is for another host name", hint: "check the host in the base URL (invoker_config.base_url); a TLS-inspecting proxy's CA goes in NODE_EXTRA_CA_CERTS" };
  }
  return undefined;
}

/** No answer (or no progress in a streamed answer) within the timeout. */
export function timeoutError(timeoutMs: number, failed: FailedRequest, cause: unknown): ProviderError {
  return new ProviderError("provider_timeout", `no answer from ${failed.endpoint.baseURL} for model \`${failed.wireModel}\` within ${timeoutMs / 1000} s`, {
    hint: "the server may be overloaded or the model slow to load; try again, or raise the timeout: `timeout: <seconds>` in the agent's config (or in `global`), or `lllm run --timeout <seconds>`",
    cause,
  });
}

/** The server answered, but with nothing usable: garbage, a broken connection, an empty or cut-off reply. */
export function badAnswerError(error: BadProviderAnswer, failed: FailedRequest, delivered: boolean): ProviderError {
  const where = `${failed.endpoint.baseURL} for model \`${failed.wireModel}\`${afterAttempts(failed)}`;
  // Part of a streamed answer is already on the screen: say it is not the whole answer.
  const partial = delivered ? "; the text printed so far is only part of the answer" : "";
  if (error.kind === "too_large") {
    return new ProviderError("provider_reply_too_large", `the reply from ${where} is ${error.message}; stopped reading it`, {
      hint: "if this server's replies are really that large, raise `reply_size` in the project settings (.lllmrc), e.g. `reply_size: 256M`",
      cause: error,
    });
  }
  if (error.kind === "connection_lost") {
    return new ProviderError("provider_connection", `lost the connection to ${where}: ${error.message}${partial}`, {
      hint: "the server or a proxy in between closed the connection; try again, and check the server's logs if it keeps happening",
      cause: error,
    });
  }
  const code = error.kind === "incomplete" ? "provider_incomplete_answer" : "provider_bad_response";
  return new ProviderError(code, `no usable answer from ${where}: ${error.message}${partial}`, {
    hint: "check that the base URL points at an OpenAI-compatible API (…/v1) and that the server is healthy; try again",
    cause: error,
  });
}
