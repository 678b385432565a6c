// server.public_url and telemetry.otlp.endpoint are built on (asset links, <endpoint>/v1/traces): check, start and a
// reload (all through loadConfig) refuse what is not an absolute http(s) URL, at its line.
import { describe, expect, it } from "vitest";
import { problems } from "./config.testkit.ts";

describe("server.public_url", () => {
  it("refuses a value that is not an absolute http(s) URL, at its line, instead of pasting it into signed asset links", async () => {
    expect(await problems(`server: { public_url: "not a url" }\n`)).toEqual([
      "F:1:23: server.public_url: must be an absolute http(s) URL, the origin of signed asset links, such as https://gateway.example.com (it is not an absolute URL)",
    ]);
    expect(await problems(`server:\n  public_url: ftp://files.example.com\n`)).toEqual([
      "F:2:15: server.public_url: must be an absolute http(s) URL, the origin of signed asset links, such as https://gateway.example.com (its scheme is ftp)",
    ]);
    expect(await problems(`server: { public_url: "https://gw.example.com/?via=proxy" }\n`)).toEqual([
      "F:1:23: server.public_url: must be an absolute http(s) URL, the origin of signed asset links, such as https://gateway.example.com (it has a query or fragment, which the path added to it would end up in)",
    ]);
  });

  it("takes an origin, with a trailing slash or a path prefix (a proxy serving the gateway under one), and an empty ${VAR:-}", async () => {
    for (const url of ["https://gw.example.com", "https://gw.example.com/", "http://10.0.0.5:8787/gateway", ""]) {
      expect(await problems(`server: { public_url: "${url}" }\n`)).toEqual([]);
    }
  });
});

describe("telemetry.otlp.endpoint", () => {
  it("refuses a value that is not an absolute http(s) URL at its line (start crashed with the exporter's stack)", async () => {
    expect(await problems(`telemetry:\n  otlp: { endpoint: "not a url" }\n`)).toEqual([
      "F:2:21: telemetry.otlp.endpoint: must be an absolute http(s) URL, the collector's base URL, such as http://localhost:4318 (it is not an absolute URL)",
    ]);
  });

  it("does not repeat the value, which may hold a password", async () => {
    const found = await problems(`telemetry:\n  otlp: { endpoint: "https://user:s3cret@collector:99999" }\n`);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain("telemetry.otlp.endpoint: must be an absolute http(s) URL");
    expect(found[0]).not.toContain("s3cret");
  });

  it("takes a base URL or the full /v1/traces URL", async () => {
    for (const url of ["http://localhost:4318", "https://otlp.example.com/", "https://otlp.example.com/v1/traces"]) {
      expect(await problems(`telemetry: { otlp: { endpoint: "${url}" } }\n`)).toEqual([]);
    }
  });
});
