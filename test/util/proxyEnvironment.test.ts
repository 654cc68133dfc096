import { describe, expect, it } from "vitest";
import { proxyAuthorization, proxyEnvironment, proxyFor, ProxySettingInvalid } from "../../src/util/proxyEnvironment.js";

/** Which requests go through the proxy: curl's variables, NO_PROXY's hosts, domains, ports, addresses and `*`. */

const via = (env: NodeJS.ProcessEnv, url: string): string | undefined => proxyFor(proxyEnvironment(env), new URL(url))?.href;

describe("proxyEnvironment", () => {
  it("takes https_proxy for https and http_proxy for http, the lower-case spelling first; none set is no proxy", () => {
    const env = { https_proxy: "http://lower:3128", HTTPS_PROXY: "http://upper:3128", HTTP_PROXY: "plain:8080" };
    expect(via(env, "https://api.openai.com/v1")).toBe("http://lower:3128/");
    expect(via(env, "http://localhost:11434/v1")).toBe("http://plain:8080/");
    expect(via({ HTTPS_PROXY: "http://upper:3128" }, "https://api.openai.com/v1")).toBe("http://upper:3128/");
    expect(via({ HTTPS_PROXY: "http://upper:3128" }, "http://localhost:11434/v1")).toBeUndefined();
    expect(proxyEnvironment({ HTTPS_PROXY: " ", https_proxy: "" })).toBeUndefined();
  });

  it("NO_PROXY: `*`, exact hosts with their subdomains, leading-dot domains, ports, addresses and subnets", () => {
    const proxied = (noProxy: string, url: string): boolean => via({ HTTPS_PROXY: "http://proxy:3128", HTTP_PROXY: "http://proxy:3128", NO_PROXY: noProxy }, url) !== undefined;
    expect(proxied("*", "https://api.openai.com")).toBe(false);
    expect(proxied("openai.com", "https://openai.com")).toBe(false);
    expect(proxied("openai.com", "https://api.openai.com")).toBe(false);
    expect(proxied("openai.com", "https://notopenai.com")).toBe(true);
    expect(proxied(".openai.com", "https://api.openai.com")).toBe(false);
    expect(proxied(".openai.com", "https://openai.com")).toBe(true);
    expect(proxied("*.openai.com", "https://api.openai.com")).toBe(false);
    expect(proxied("API.OpenAI.com.", "https://api.openai.com")).toBe(false);
    expect(proxied("api.openai.com:443", "https://api.openai.com")).toBe(false);
    expect(proxied("api.openai.com:8443", "https://api.openai.com")).toBe(true);
    expect(proxied("localhost:11434", "http://localhost:11434/v1")).toBe(false);
    expect(proxied("127.0.0.1", "http://127.0.0.1:8000")).toBe(false);
    expect(proxied("127.0.0.1:9000", "http://127.0.0.1:8000")).toBe(true);
    expect(proxied("10.0.0.0/8, 192.168.1.0/24", "http://10.2.3.4:8000")).toBe(false);
    expect(proxied("10.0.0.0/8 192.168.1.0/24", "http://192.168.2.1:8000")).toBe(true);
    expect(proxied("::1", "http://[::1]:8000")).toBe(false);
    expect(proxied("[::1]:8000", "http://[::1]:8000")).toBe(false);
    expect(proxied("fd00::/8", "http://[fd12::1]:8000")).toBe(false);
    // Loopback is not special: with NO_PROXY unset, 127.0.0.1 goes through the proxy too, as with curl.
    expect(proxied("", "http://127.0.0.1:8000")).toBe(true);
    expect(proxied("example.com,,", "https://api.openai.com")).toBe(true);
  });

  it("reads a proxy's user:password (percent-decoded) as Proxy-Authorization; refuses what it cannot speak without quoting it", () => {
    const environment = proxyEnvironment({ HTTPS_PROXY: "http://me%40corp:p%3Ass@proxy:3128" })!;
    expect(proxyAuthorization(environment.https!)).toBe(`Basic ${Buffer.from("me@corp:p:ss").toString("base64")}`);
    expect(proxyAuthorization(new URL("http://proxy:3128"))).toBeUndefined();
    for (const value of ["socks5://me:Secret-1234@proxy:1080", "https://me:Secret-1234@proxy:443", "http://me:Secret-1234@[bad"]) {
      const error = (() => {
        try {
          proxyEnvironment({ https_proxy: value });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(ProxySettingInvalid);
      expect((error as ProxySettingInvalid).variable).toBe("https_proxy");
      expect((error as Error).message).not.toContain("Secret-1234");
    }
  });
});
