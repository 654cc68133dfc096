import { isSecretName, MIN_SECRET_LENGTH, registerSecret } from "../util/redact.js";

/** Settings made of lower-case words: `production`, `readonly`, `read-only`, `repos,issues,pull_requests`. */
const WORDS = /^[a-z]+(?:[-_.,:/ ]+[a-z]+)*$/;
/** A file path: `/data/project`, `~/notes`, `./data`, `../x`, `C:\data`. */
const FILE_PATH = /^(?:(?:~|\.{1,2})?\/|[A-Za-z]:[\\/])/;

/**
 * Register the values of a stdio server's `env` (as the server gets them, `${NAME}` expanded) for redaction, so
 * that a server which echoes its environment (a debug tool, an error quoting its settings) cannot bring a credential
 * written in the tactic to the model, the run log or stderr.
 *
 * Every value, not only those under a credential-like name (`…_KEY`, `…_TOKEN`): what a tactic hands a server in
 * `env` is meant for that server alone, and servers name their credentials as they like (`NOTION_INTEGRATION`,
 * `SLACK_TEAM_PASS`, `ACME_LICENCE`), so the name is no guide. Left out, because they are no credential and blanking
 * them everywhere would garble answers (`[redacted]` for every "production" the model writes) or break the server:
 * values shorter than `MIN_SECRET_LENGTH` (`1`, `true`, `warn`; the redactor ignores them anyway), settings made of
 * lower-case words (`production`, `read-only`), and file paths (`/data/project`: a filesystem server's every answer
 * holds it, and the model needs it to ask for files). A value under a credential-like name is registered whatever
 * its shape. URLs are registered: a webhook's or an API's URL may carry its key in its path or query.
 */
export function registerServerEnvSecrets(env: Record<string, string> | undefined): void {
  for (const [name, value] of Object.entries(env ?? {})) {
    if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) continue;
    if (isSecretName(name) || !(WORDS.test(value) || FILE_PATH.test(value))) registerSecret(value);
  }
}
