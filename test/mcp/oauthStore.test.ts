import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CALLBACK_PORTS, freeLoopbackPort, waitForCallback } from "../../src/mcp/oauth/LoopbackCallback.js";
import { OAuthStore } from "../../src/mcp/oauth/OAuthStore.js";
import { tempDir } from "../helpers/tempTree.js";

describe("OAuthStore: a server's sign-in in $LLLM_HOME", () => {
  it("creates nothing until there is something to keep, then a 0600 file in a 0700 folder, and removes it when emptied", () => {
    const home = tempDir("lllm-oauth-");
    const store = new OAuthStore({ home, server: "https://mcp.example.com/mcp" });
    expect(store.state).toEqual({ server: "https://mcp.example.com/mcp" });
    expect(existsSync(path.join(home, "mcp"))).toBe(false);
    store.update({ tokens: { access_token: "at-1", token_type: "Bearer", refresh_token: "rt-1" } });
    const folder = path.join(home, "mcp", "oauth");
    const [file] = readdirSync(folder);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(folder, file!)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path.join(folder, file!), "utf8"))).toEqual({ server: "https://mcp.example.com/mcp", tokens: { access_token: "at-1", token_type: "Bearer", refresh_token: "rt-1" } });
    // Another run reads it back; another server does not see it.
    expect(new OAuthStore({ home, server: "https://mcp.example.com/mcp" }).state.tokens?.access_token).toBe("at-1");
    expect(new OAuthStore({ home, server: "https://other.example.com/mcp" }).state.tokens).toBeUndefined();
    store.update({ tokens: undefined });
    expect(readdirSync(folder)).toEqual([]);
  });
});

describe("the loopback callback of a browser sign-in", () => {
  it("is on a port below those of outgoing connections (which might hold it by the time a sign-in listens), never one in use", async () => {
    const ports = await Promise.all(Array.from({ length: 5 }, () => freeLoopbackPort()));
    for (const port of ports) expect(port >= CALLBACK_PORTS.first && port <= CALLBACK_PORTS.last, `port ${port}`).toBe(true);
    // Two ports of the range, one in use: the other is given; both in use: a free one elsewhere.
    const range = await twoFreePorts();
    const first = await listeningOn(range.first);
    try {
      expect(await freeLoopbackPort(range)).toBe(range.last);
      const last = await listeningOn(range.last);
      try {
        const elsewhere = await freeLoopbackPort(range);
        expect([range.first, range.last]).not.toContain(elsewhere);
        expect(elsewhere).toBeGreaterThan(0);
      } finally {
        await close(last);
      }
    } finally {
      await close(first);
    }
  });

  it("takes the code only with the state lllm sent, and listens on 127.0.0.1", async () => {
    const port = await freeLoopbackPort();
    let browser: Promise<Array<{ status: number; text: string }>> | undefined;
    const code = await waitForCallback({
      port,
      state: "expected-state",
      timeoutMs: 30_000,
      onListening: () => {
        browser = (async () => {
          const answers = [];
          for (const state of ["forged-state", "expected-state"]) {
            const response = await fetch(`http://127.0.0.1:${port}/callback?code=code-for-${state}&state=${state}`);
            answers.push({ status: response.status, text: await response.text() });
          }
          return answers;
        })();
      },
    });
    expect(code).toBe("code-for-expected-state");
    expect(await browser).toEqual([
      { status: 400, text: "This sign-in link is not the one lllm is waiting for.\n" },
      { status: 200, text: "Signed in; you can close this page and return to the terminal.\n" },
    ]);
    // Closed once the code is in.
    await expect(fetch(`http://127.0.0.1:${port}/callback`)).rejects.toThrow();
  });

  it("reports the authorization server's error", async () => {
    const port = await freeLoopbackPort();
    const failure = await waitForCallback({
      port,
      state: "s",
      timeoutMs: 30_000,
      onListening: async () => {
        await fetch(`http://127.0.0.1:${port}/callback?error=access_denied&error_description=The+user+said+no&state=s`);
      },
    }).catch((error: unknown) => error);
    expect((failure as Error).message).toBe("the authorization server answered access_denied: The user said no");
  });
});

/** A server listening on `port` of 127.0.0.1. */
function listeningOn(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", () => resolve(server)));
}

function close(server: Server): Promise<unknown> {
  return new Promise((resolve) => server.close(resolve));
}

/** Two neighbouring ports of the callback range that are free now. */
async function twoFreePorts(): Promise<{ first: number; last: number }> {
  for (let port = CALLBACK_PORTS.last - 1; port > CALLBACK_PORTS.first; port -= 2) {
    const held = await Promise.allSettled([listeningOn(port), listeningOn(port + 1)]);
    const servers = held.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    await Promise.all(servers.map(close));
    if (servers.length === 2) return { first: port, last: port + 1 };
  }
  throw new Error("no two neighbouring free ports in the callback range");
}
