import { describe, expect, it } from "vitest";
import { configSecrets } from "./config-secrets.ts";
import type { GatewayConfig } from "../generated/types/gateway.ts";

describe("configSecrets", () => {
  it("lists every credential a config sends upstream or keeps, and nothing that is not one", () => {
    const config = {
      server: { signing_secret: "signing-secret-0001" },
      metrics: { token: "metrics-token-0001" },
      store: { kind: "redis", url: "redis://gw:redis-pass-0001@cache:6379" },
      telemetry: { otlp: { endpoint: "http://c:4318", headers: { "x-collector-token": "collector-0001" } } },
      providers: {
        openai: { protocol: "openai", base_url: "https://api.openai.com/v1", api_key: "sk-openai-0001", headers: { "OpenAI-Organization": "org-public", "X-Custom-Auth": "custom-auth-0001" } },
        proxy: { protocol: "openai", base_url: "https://user-0001:pass-0001@proxy.internal/v1?api-key=query-key-0001" },
        aws: { protocol: "bedrock", aws_access_key_id: "AKIACONFIG0001", aws_secret_access_key: "aws-secret-0001" },
      },
      projects: { acme: { keys: [], providers: { openai: { api_key: "sk-byok-0001", base_url: "https://byok.internal/v1" } } } },
    } as unknown as GatewayConfig;
    const env = { AWS_SESSION_TOKEN: "aws-session-from-env-0001", HOME: "/root" };
    expect(configSecrets(config, env).sort()).toEqual([
      "AKIACONFIG0001", "aws-secret-0001", "aws-session-from-env-0001", "collector-0001", "custom-auth-0001", "metrics-token-0001", "pass-0001",
      "query-key-0001", "redis-pass-0001", "signing-secret-0001", "sk-byok-0001", "sk-openai-0001",
    ].sort());
  });

  it("the OTLP collector's URL password, from the config or the OTEL_EXPORTER_OTLP_* variables", () => {
    const config = { telemetry: { otlp: { endpoint: "http://otel:otlp-pass-0001@127.0.0.1:4318" } } } as unknown as GatewayConfig;
    expect(configSecrets(config, {})).toEqual(["otlp-pass-0001"]);
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "https://u:env-pass-0001@otel:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://u:env-pass-0002@otel:4318/v1/traces" };
    expect(configSecrets({} as GatewayConfig, env).sort()).toEqual(["env-pass-0001", "env-pass-0002"]);
  });

  it("the egress proxy's password, from server.egress_proxy.url or the proxy variables", () => {
    const config = { server: { egress_proxy: { url: "http://alice:proxy-pass-0001@proxy.corp:3128" } } } as unknown as GatewayConfig;
    expect(configSecrets(config, {})).toEqual(["proxy-pass-0001"]);
    const env = { HTTPS_PROXY: "http://u:env-proxy-0001@p:3128", http_proxy: "http://u:env-proxy-0002@p:3128", NO_PROXY: "localhost" };
    expect(configSecrets({} as GatewayConfig, env).sort()).toEqual(["env-proxy-0001", "env-proxy-0002"]);
  });
  it("a password that is not valid percent-encoding (a raw %) is kept as written, never a crash of check or start", () => {
    const config = {
      providers: { proxy: { protocol: "openai", base_url: "https://u:100%@proxy.internal/v1" } },
      store: { kind: "redis", url: "redis://gw:50%off@cache:6379" },
    } as unknown as GatewayConfig;
    expect(() => configSecrets(config, {})).not.toThrow();
    expect(configSecrets(config, {}).sort()).toEqual(["100%", "50%off"]);
    expect(configSecrets({} as GatewayConfig, { HTTPS_PROXY: "http://user:50%off@127.0.0.1:3128" })).toEqual(["50%off"]);
  });

  it("with server.egress_proxy (even {}) the proxy variables are not the gateway's: not read", () => {
    const env = { HTTPS_PROXY: "http://user:50%off@127.0.0.1:3128", http_proxy: "http://u:env-proxy-0002@p:3128" };
    expect(configSecrets({ server: { egress_proxy: {} } } as unknown as GatewayConfig, env)).toEqual([]);
    const config = { server: { egress_proxy: { url: "http://alice:proxy-pass-0001@proxy.corp:3128" } } } as unknown as GatewayConfig;
    expect(configSecrets(config, env)).toEqual(["proxy-pass-0001"]);
  });
});
