import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { registerSecret } from "../../util/redact.js";

/** The part of @npmcli/config used here (it ships no types). */
interface NpmConfigInstance {
  load(): Promise<void>;
  get(key: string): unknown;
  getCredentialsByURI(uri: string): { token?: string; auth?: string; username?: string; password?: string };
}
type NpmConfigClass = new (options: Record<string, unknown>) => NpmConfigInstance;

/** npm's configuration as npm itself reads it: the registry of each scope and the credentials of each registry. */
export interface NpmSettings {
  /** The registry a package name is fetched from (its scope's, else the default), ending in `/`. */
  registryFor(name: string): string;
  /** The Authorization header npm would send to `url` (the credentials of the longest registry path it is under), if any. */
  authorizationFor(url: string): string | undefined;
}

/**
 * Load npm's configuration with npm's own loader (@npmcli/config, with npm's definitions): the builtin, global,
 * user (`~/.npmrc`) and project (`.npmrc` of `cwd`'s project) files and the `npm_config_*` variables, `${VAR}`
 * expansion included. Every credential found is registered as a secret, so no message or log can show it.
 */
export async function loadNpmSettings(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<NpmSettings> {
  const require = createRequire(import.meta.url);
  const Config = require("@npmcli/config") as NpmConfigClass;
  const { definitions, shorthands, flatten, nerfDarts } = require("@npmcli/config/lib/definitions/index.js") as Record<string, unknown>;
  const nerfDart = require("@npmcli/config/lib/nerf-dart.js") as (url: string) => string;
  const npmPath = [path.join(path.dirname(process.execPath), "..", "lib", "node_modules", "npm"), path.dirname(process.execPath)].find((candidate) => existsSync(path.join(candidate, "package.json"))) ?? path.dirname(process.execPath);
  const config = new Config({ definitions, shorthands, flatten, nerfDarts, npmPath, argv: [process.execPath, "npm"], env, cwd, execPath: process.execPath, platform: process.platform, warn: false });
  await config.load();
  const withSlash = (url: string): string => (url.endsWith("/") ? url : `${url}/`);
  return {
    registryFor(name: string): string {
      const scope = name.startsWith("@") ? name.slice(0, name.indexOf("/")) : undefined;
      const scoped = scope === undefined ? undefined : config.get(`${scope}:registry`);
      return withSlash(typeof scoped === "string" && scoped !== "" ? scoped : String(config.get("registry")));
    },
    authorizationFor(url: string): string | undefined {
      // As npm-registry-fetch: the credentials of the longest registry path `url` is under, and none elsewhere.
      for (let key = nerfDart(url); key.length > 2; key = key.replace(/(?:[^/]+|\/)$/, "")) {
        const credentials = config.getCredentialsByURI(`http:${key}`);
        if (credentials.token) {
          registerSecret(credentials.token);
          return `Bearer ${credentials.token}`;
        }
        if (credentials.auth) {
          registerSecret(credentials.auth);
          registerSecret(credentials.password);
          return `Basic ${credentials.auth}`;
        }
      }
      return undefined;
    },
  };
}
