/**
 * Credentials written into URLs (`http://user:password@host/v1`, `https://token@host`): a base URL, a proxy's, an
 * MCP server's or one in the environment (`OPENAI_BASE_URL`, `HTTPS_PROXY`, `DATABASE_URL`) may carry them, and
 * every message that names the URL would print them.
 */

/**
 * A URL's scheme and userinfo, up to the `@` before the host. The userinfo ends at the last `@` before the path (a
 * password with a raw `@` stays whole) and never spans whitespace, quotes or brackets (a URL inside JSON or prose).
 * The slashes may be JSON-escaped (`http:\/\/user:pass@host`, as PHP and some loggers write them), up to three deep.
 * A scheme is at most 32 characters: unbounded, each word of a long dotted or hyphenated run (`a.b.c.…`) began an
 * attempt that walked to the run's end, quadratic in its length (40 KB took 0.8 s, and every text lllm shows or
 * keeps passes here).
 */
const USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:(?:\\{0,7}\/){2})([^\s/?#"'<>()[\]{}`\\]{1,2048})@/gi;

/**
 * A userinfo that only shows the form (`USER:PASSWORD`, `:PASSWORD`, `TOKEN`): a hint that says how to write a URL
 * must stay readable. (A real password spelled so is a secret of the redaction set, and masked as such.)
 */
const PLACEHOLDER = /^(?:USER|USERNAME|TOKEN)?(?::(?:PASSWORD|PASS|TOKEN))?$/;

/**
 * An ssh URL's user name alone (`ssh://git@host`, `git+ssh://deploy@host`): an account's name, not a secret (ssh
 * signs in with a key or asks for the password), so kept as written. A password beside it is still one.
 */
const SSH_SCHEME = /^(?:[a-z0-9.-]+\+)?ssh:/i;
const sshUser = (scheme: string, userinfo: string): boolean => !userinfo.includes(":") && SSH_SCHEME.test(scheme);

/** Whether USERINFO can match: most texts hold no `@`, or no `://` (or `:\/`), and are passed at once. */
function mayHoldUserinfo(text: string): boolean {
  return text.includes("@") && (text.includes("://") || text.includes(":\\"));
}

/** The text with the userinfo of every URL in it replaced: `http://[redacted]@host/v1`. */
export function maskUrlCredentials(text: string, mask = "[redacted]"): string {
  if (!mayHoldUserinfo(text)) return text;
  return text.replace(USERINFO, (match, scheme: string, userinfo: string) => (userinfo !== "" && (PLACEHOLDER.test(userinfo) || sshUser(scheme, userinfo)) ? match : `${scheme}${mask}@`));
}

/**
 * The secrets in the URLs of `text`: each password (decoded from its percent-encoding), and a user name that stands
 * alone (`https://<token>@host`: a token, by the common convention) but an ssh URL's. A user name beside a password
 * is not one.
 */
export function urlCredentials(text: string): string[] {
  if (!mayHoldUserinfo(text)) return [];
  const found: string[] = [];
  for (const match of text.matchAll(USERINFO)) {
    const userinfo = match[2]!;
    if (sshUser(match[1]!, userinfo)) continue;
    const colon = userinfo.indexOf(":");
    found.push(decode(colon === -1 ? userinfo : userinfo.slice(colon + 1)));
  }
  return found.filter((secret) => secret !== "");
}

/** The credentials of every URL among the strings of a JSON-like value (a parsed config file), keys included. */
export function urlCredentialsIn(value: unknown): string[] {
  const found: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") found.push(...urlCredentials(item));
    else if (Array.isArray(item)) for (const element of item as unknown[]) stack.push(element); // not push(...): a long list overflows the stack
    else if (item !== null && typeof item === "object") {
      for (const [key, entry] of Object.entries(item)) {
        found.push(...urlCredentials(key));
        stack.push(entry);
      }
    }
  }
  return found;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // not valid percent-encoding: the text is the secret as written
  }
}
