import type net from "node:net";
import { requireNow } from "./lazyModule.js";

/** node:net, `require`d when an address is first looked at (NO_PROXY rules, a proxy's host): most runs set no proxy. */
const netModule = (): typeof net => requireNow<typeof net>("node:net");

/**
 * The HTTP proxies an environment asks for, as curl reads them: `https_proxy` for https:// targets, `http_proxy` for
 * http:// ones (each in lower or upper case, the lower-case one first), and `no_proxy` for the hosts reached
 * directly. Only `http://` proxies are spoken (a CONNECT tunnel for https targets, absolute-form requests for
 * http ones); a proxy's `user:password@` is sent to that proxy alone, as `Proxy-Authorization`.
 */
export interface ProxyEnvironment {
  /** For https:// targets. */
  https?: URL;
  /** For http:// targets. */
  http?: URL;
  /** Hosts reached directly, whatever the two above say. */
  noProxy: NoProxyRule[];
}

/** One `no_proxy` entry. */
type NoProxyRule =
  | { kind: "all" }
  | { kind: "host"; host: string; subdomainsOnly: boolean; port?: number }
  | { kind: "ip"; ip: string; port?: number }
  | { kind: "subnet"; list: net.BlockList };

/** A proxy variable whose value cannot be used. */
export class ProxySettingInvalid extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = "ProxySettingInvalid";
  }
}

/** The proxy settings of `env`, or undefined when it names no proxy. Throws `ProxySettingInvalid` for a bad one. */
export function proxyEnvironment(env: NodeJS.ProcessEnv): ProxyEnvironment | undefined {
  const https = proxyVariable(env, "https_proxy");
  const http = proxyVariable(env, "http_proxy");
  if (https === undefined && http === undefined) return undefined;
  const noProxy = variable(env, "no_proxy");
  return { ...(https ? { https } : {}), ...(http ? { http } : {}), noProxy: noProxy === undefined ? [] : parseNoProxy(noProxy.value) };
}

/** The proxy to send a request for `target` through, or undefined for a direct connection. */
export function proxyFor(environment: ProxyEnvironment | undefined, target: URL): URL | undefined {
  if (environment === undefined) return undefined;
  const proxy = target.protocol === "https:" ? environment.https : target.protocol === "http:" ? environment.http : undefined;
  if (proxy === undefined) return undefined;
  const host = target.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
  return environment.noProxy.some((rule) => bypasses(rule, host, port)) ? undefined : proxy;
}

/** The proxy's address with no credentials, for messages. */
export function proxyOrigin(proxy: URL): string {
  return `${proxy.protocol}//${proxy.host}`;
}

/** A proxy URL's `user:password@`, percent-decoded, or undefined. */
export function proxyCredentials(proxy: URL): { user: string; password: string } | undefined {
  if (proxy.username === "" && proxy.password === "") return undefined;
  return { user: decoded(proxy.username), password: decoded(proxy.password) };
}

/** The `Proxy-Authorization` value of a proxy URL's `user:password@`, or undefined. */
export function proxyAuthorization(proxy: URL): string | undefined {
  const credentials = proxyCredentials(proxy);
  if (credentials === undefined) return undefined;
  return `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`, "utf8").toString("base64")}`;
}

/** `%40` -> `@`; a `%` that starts no escape stays as it is. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function variable(env: NodeJS.ProcessEnv, lower: string): { name: string; value: string } | undefined {
  for (const name of [lower, lower.toUpperCase()]) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

function proxyVariable(env: NodeJS.ProcessEnv, lower: string): URL | undefined {
  const found = variable(env, lower);
  if (found === undefined) return undefined;
  // `proxy:3128` means http://proxy:3128, as for curl.
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(found.value) ? found.value : `http://${found.value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // The value may hold a password: never quote it.
    throw new ProxySettingInvalid(found.name, `${found.name} is not a URL`);
  }
  if (url.protocol !== "http:") throw new ProxySettingInvalid(found.name, `${found.name} is a ${url.protocol.slice(0, -1)}:// proxy (${proxyOrigin(url)}); lllm speaks to http:// proxies only`);
  if (url.hostname === "") throw new ProxySettingInvalid(found.name, `${found.name} names no proxy host`);
  return url;
}

function parseNoProxy(text: string): NoProxyRule[] {
  const rules: NoProxyRule[] = [];
  for (const raw of text.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") {
      rules.push({ kind: "all" });
      continue;
    }
    const slash = entry.indexOf("/");
    if (slash > 0) {
      const address = entry.slice(0, slash).replace(/^\[|\]$/g, "");
      const prefix = Number(entry.slice(slash + 1));
      const family = netModule().isIP(address);
      if (family !== 0 && Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 4 ? 32 : 128)) {
        const list = new (netModule().BlockList)();
        list.addSubnet(address, prefix, family === 4 ? "ipv4" : "ipv6");
        rules.push({ kind: "subnet", list });
      }
      continue;
    }
    const { host, port } = splitPort(entry);
    if (netModule().isIP(host) !== 0) {
      rules.push({ kind: "ip", ip: host, ...(port !== undefined ? { port } : {}) });
      continue;
    }
    // `.example.com` and `*.example.com`: the subdomains; `example.com`: the domain and its subdomains.
    const subdomainsOnly = host.startsWith(".") || host.startsWith("*.");
    const name = host.replace(/^\*?\./, "").replace(/\.$/, "");
    if (name !== "") rules.push({ kind: "host", host: name, subdomainsOnly, ...(port !== undefined ? { port } : {}) });
  }
  return rules;
}

/** `host:port`, `[v6]:port`, or a bare IPv6 address (its colons are no port). */
function splitPort(entry: string): { host: string; port?: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1]!, ...(bracketed[2] ? { port: Number(bracketed[2]) } : {}) };
  if (netModule().isIP(entry) === 6) return { host: entry };
  const match = /^(.*):(\d+)$/.exec(entry);
  return match ? { host: match[1]!, port: Number(match[2]) } : { host: entry };
}

function bypasses(rule: NoProxyRule, host: string, port: number): boolean {
  switch (rule.kind) {
    case "all":
      return true;
    case "subnet": {
      const family = netModule().isIP(host);
      return family !== 0 && rule.list.check(host, family === 4 ? "ipv4" : "ipv6");
    }
    case "ip":
      return (rule.port === undefined || rule.port === port) && netModule().isIP(host) !== 0 && sameAddress(rule.ip, host);
    case "host": {
      if (rule.port !== undefined && rule.port !== port) return false;
      if (host.endsWith(`.${rule.host}`)) return true;
      return !rule.subdomainsOnly && host === rule.host;
    }
  }
}

function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  const list = new (netModule().BlockList)();
  const family = netModule().isIP(a) === 4 ? "ipv4" : "ipv6";
  list.addAddress(a, family);
  return list.check(b, netModule().isIP(b) === 4 ? "ipv4" : "ipv6");
}
