import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { privateFolder } from "../../util/privateFolder.js";

/** What lllm keeps of one server's sign-in. */
export interface StoredOAuthState {
  /** The MCP server's URL the state belongs to (a check against a hash collision, and for people reading it). */
  server: string;
  client_information?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
}

/**
 * A server's OAuth state on disk: `$LLLM_HOME/mcp/oauth/<hash of the server URL>.json`, in a folder readable by
 * this user alone, the file written 0600 (to a temporary name, then renamed, so a crash never leaves half a file).
 * Without a private folder (someone else could write there) nothing is kept: every run signs in again.
 */
export class OAuthStore {
  readonly #folder: string;
  readonly #name: string;
  readonly #server: string;
  #state: StoredOAuthState;

  constructor(options: { home: string; server: string }) {
    this.#server = options.server;
    this.#folder = path.join(options.home, "mcp", "oauth");
    this.#name = `${createHash("sha256").update(options.server).digest("hex").slice(0, 32)}.json`;
    this.#state = this.#read();
  }

  get state(): StoredOAuthState {
    return this.#state;
  }

  update(change: Partial<Omit<StoredOAuthState, "server">>): void {
    this.#state = { ...this.#state, ...change, server: this.#server };
    for (const key of Object.keys(change) as Array<keyof typeof change>) if (change[key] === undefined) delete this.#state[key];
    this.#write();
  }

  /** The file, in a folder of this user's alone (created only when there is something to write). */
  #file(create: boolean): string | undefined {
    if (!create && !existsSync(this.#folder)) return undefined;
    const folder = privateFolder(this.#folder);
    return folder === undefined ? undefined : path.join(folder, this.#name);
  }

  #read(): StoredOAuthState {
    const file = this.#file(false);
    if (file === undefined || !existsSync(file)) return { server: this.#server };
    try {
      const parsed = JSON.parse(readFileSync(file, "utf8")) as StoredOAuthState;
      return parsed.server === this.#server ? parsed : { server: this.#server };
    } catch {
      return { server: this.#server };
    }
  }

  #write(): void {
    const empty = this.#state.client_information === undefined && this.#state.tokens === undefined;
    const file = this.#file(!empty);
    if (file === undefined) return;
    if (empty) {
      rmSync(file, { force: true });
      return;
    }
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(this.#state, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, file);
  }
}
