import { describe, expect, it } from "vitest";
import { describeEgress, maskProxyUrl, proxyFor, resolveEgressProxy } from "./egress-proxy.ts";

const resolve = (config: Parameters<typeof resolveEgressProxy>[0], env: Record<string, string> = {}) => resolveEgressProxy(config, env);
const via = (config: Parameters<typeof resolveEgressProxy>[0], env: Record<string, string>, target: string) =>
  proxyFor(resolve(config, env).proxy, target)?.url;

describe("where the proxy comes from", () => {
  it("no config and no variables: no proxy at all", () => {
    expect(resolve(undefined, {})).toEqual({ problems: [] });
    expect(resolve(undefined, { PATH: "/bin", NO_PROXY: "localhost" }).proxy).toBeUndefined();
  });

  it("https targets use https_proxy, then HTTPS_PROXY, then the http proxy; http targets http_proxy, then HTTP_PROXY", () => {
    const env = { https_proxy: "http://lower:1", HTTPS_PROXY: "http://upper:2", http_proxy: "http://plain-lower:3", HTTP_PROXY: "http://plain-upper:4" };
    expect(via(undefined, env, "https://api.openai.com/v1")).toBe("http://lower:1");
    expect(via(undefined, env, "http://fake.local:8080")).toBe("http://plain-lower:3");
    expect(via(undefined, { HTTPS_PROXY: "http://upper:2", HTTP_PROXY: "http://plain-upper:4" }, "https://api.openai.com")).toBe("http://upper:2");
    expect(via(undefined, { HTTPS_PROXY: "http://upper:2", HTTP_PROXY: "http://plain-upper:4" }, "http://x")).toBe("http://plain-upper:4");
    // Only HTTP_PROXY: https targets use it too (undici's EnvHttpProxyAgent).
    expect(via(undefined, { HTTP_PROXY: "http://plain-upper:4" }, "https://api.openai.com")).toBe("http://plain-upper:4");
    // Only HTTPS_PROXY: plain http targets go direct.
    expect(via(undefined, { HTTPS_PROXY: "http://upper:2" }, "http://127.0.0.1:11434")).toBeUndefined();
  });

  it("an empty variable means none (and an empty https_proxy falls back to the http proxy)", () => {
    expect(resolve(undefined, { HTTPS_PROXY: "", HTTP_PROXY: "" }).proxy).toBeUndefined();
    expect(via(undefined, { https_proxy: "", HTTPS_PROXY: "http://upper:2", HTTP_PROXY: "http://p:4" }, "https://x")).toBe("http://p:4");
  });

  it("a variable without a scheme is an http proxy (curl's reading)", () => {
    expect(via(undefined, { HTTPS_PROXY: "proxy.corp:3128" }, "https://api.openai.com")).toBe("http://proxy.corp:3128");
  });

  it("no_proxy, then NO_PROXY", () => {
    const env = { HTTPS_PROXY: "http://p:1", no_proxy: "internal.corp", NO_PROXY: "api.openai.com" };
    expect(via(undefined, env, "https://api.openai.com")).toBe("http://p:1");
    expect(via(undefined, env, "https://vault.internal.corp")).toBeUndefined();
  });

  it("server.egress_proxy wins over every variable, for http and https targets alike, with its own no_proxy", () => {
    const env = { HTTPS_PROXY: "http://env:1", HTTP_PROXY: "http://env:2", NO_PROXY: "api.openai.com" };
    const config = { url: "https://cfg.corp:3129", no_proxy: [".internal"] };
    expect(via(config, env, "https://api.openai.com")).toBe("https://cfg.corp:3129");
    expect(via(config, env, "http://fake:9")).toBe("https://cfg.corp:3129");
    expect(via(config, env, "https://db.internal")).toBeUndefined();
  });

  it("server.egress_proxy without a url (or with an empty one): every call direct, the variables ignored", () => {
    const env = { HTTPS_PROXY: "http://env:1", HTTP_PROXY: "http://env:2" };
    expect(resolve({}, env).proxy).toBeUndefined();
    expect(resolve({ url: "" }, env).proxy).toBeUndefined();
  });

  it("names where each part came from, masked", () => {
    const { proxy } = resolve(undefined, { HTTPS_PROXY: "http://alice:s3cret@proxy.corp:3128", NO_PROXY: "localhost,.corp" });
    expect(describeEgress(proxy!)).toEqual({
      https: "http://***@proxy.corp:3128 (HTTPS_PROXY)",
      http: "none: direct",
      no_proxy: "localhost,.corp (NO_PROXY)",
    });
    expect(JSON.stringify(describeEgress(proxy!))).not.toContain("s3cret");
    expect(describeEgress(resolve({ url: "http://p:1" }, {}).proxy!)).toMatchObject({ https: "http://p:1 (server.egress_proxy.url)", no_proxy: "none" });
  });

  it("keeps the credentials in the URL undici is given (it sends them as Proxy-Authorization)", () => {
    expect(via({ url: "http://alice:s%40cret@proxy.corp:3128/" }, {}, "https://x")).toBe("http://alice:s%40cret@proxy.corp:3128");
  });
});

describe("bad proxy URLs are problems, their password never repeated", () => {
  it.each([
    ["socks5://alice:s3cret@proxy:1080", "is a socks5 proxy (socks5://***@proxy:1080): only http:// and https:// proxies are supported"],
    ["http://alice:s3cret@proxy:3128/some/path", "has a path or query (http://***@proxy:3128)"],
    ["http://", "is not a URL"],
  ])("server.egress_proxy.url %s", (url, message) => {
    const { proxy, problems } = resolve({ url }, {});
    expect(proxy).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]!.at).toEqual({ path: ["server", "egress_proxy", "url"] });
    expect(problems[0]!.message).toContain(`server.egress_proxy.url ${message}`);
    expect(problems[0]!.message).not.toContain("s3cret");
  });

  it("a user or password with a % that starts no %XX escape is a problem naming the field or variable, never a crash", () => {
    const configured = resolve({ url: "http://user:100%@127.0.0.1:24612" }, {});
    expect(configured.proxy).toBeUndefined();
    expect(configured.problems).toEqual([{
      at: { path: ["server", "egress_proxy", "url"] },
      message: "server.egress_proxy.url has a password with a % that starts no %XX escape (http://***@127.0.0.1:24612): write a % in it as %25",
    }]);
    const env = resolve(undefined, { HTTPS_PROXY: "http://user:50%off@127.0.0.1:24612" });
    expect(env.proxy).toBeUndefined();
    expect(env.problems).toEqual([{ at: { env: "HTTPS_PROXY" }, message: expect.stringContaining("HTTPS_PROXY (in the environment) has a password with a % that starts no %XX escape (http://***@127.0.0.1:24612)") }]);
    expect(resolve({ url: "http://a%zz:pw@p:3128" }, {}).problems[0]!.message).toContain("has a user name with a % that starts no %XX escape (http://***@p:3128)");
    // Escaped, it is a password like any other.
    expect(via({ url: "http://user:100%25@p:3128" }, {}, "https://x")).toBe("http://user:100%25@p:3128");
  });

  it("a bad variable names itself and the way out", () => {
    const { problems } = resolve(undefined, { HTTPS_PROXY: "socks5://proxy:1080" });
    expect(problems).toEqual([{ at: { env: "HTTPS_PROXY" }, message: expect.stringContaining("HTTPS_PROXY (in the environment) is a socks5 proxy") }]);
    expect(problems[0]!.message).toContain("egress_proxy: {} ignores these variables");
  });
});

describe("masking", () => {
  it.each([
    ["http://alice:s3cret@proxy.corp:3128", "http://***@proxy.corp:3128"],
    ["http://alice@proxy.corp:3128", "http://***@proxy.corp:3128"],
    ["https://proxy.corp", "https://proxy.corp"],
    ["proxy.corp:3128", "proxy.corp:3128"],
    ["user:pw@[bad", "***@[bad"],
    ["http://user:p@ss@[bad", "http://***@[bad"],
  ])("%s", (url, shown) => {
    expect(maskProxyUrl(url)).toBe(shown);
  });
});
