// Configured headers go on every call to their upstream: a name or value the HTTP client refuses made each call a
// retried 502 ("invalid header key"). check, start and a reload (all through loadConfig) refuse them at load.
import { describe, expect, it } from "vitest";
import { problems } from "./config.testkit.ts";

const NAME_RULE = "(letters, digits and !#$%&'*+-.^_`|~ only: no spaces, colons or other characters)";

describe("configured header names", () => {
  it("refuses a provider header name that is not an HTTP token, at the name", async () => {
    expect(await problems(`providers:\n  acme: { protocol: openai, api_key: sk, headers: { "bad header": v, "x-org:": o, x-ok: fine } }\n`)).toEqual([
      `F:2:53: providers.acme.headers.bad header: "bad header" is not an HTTP header name ${NAME_RULE}`,
      `F:2:70: providers.acme.headers.x-org:: "x-org:" is not an HTTP header name ${NAME_RULE}`,
    ]);
  });

  it("refuses them in an MCP server's headers, a project's own MCP headers and the OTLP exporter's", async () => {
    expect(await problems(`mcp_servers:
  docs: { url: "https://mcp.example.com", headers: { "x team": a } }
projects:
  acme:
    keys: []
    mcp: { servers: { docs: { headers: { "auth token": b } } } }
telemetry:
  otlp: { endpoint: "http://localhost:4318", headers: { "api key": c } }
`)).toEqual([
      `F:2:54: mcp_servers.docs.headers.x team: "x team" is not an HTTP header name ${NAME_RULE}`,
      `F:6:42: projects.acme.mcp.servers.docs.headers.auth token: "auth token" is not an HTTP header name ${NAME_RULE}`,
      `F:8:57: telemetry.otlp.headers.api key: "api key" is not an HTTP header name ${NAME_RULE}`,
    ]);
  });
});

describe("configured header values", () => {
  it("refuses a value holding a line break or NUL, without repeating it", async () => {
    expect(await problems(`providers:\n  acme: { protocol: openai, api_key: sk, headers: { x-org: "org-1\\r\\nx-evil: 1", x-nul: "a\\0b" } }\n`)).toEqual([
      "F:2:60: providers.acme.headers.x-org: its value holds a carriage return (U+000D), which no HTTP request may carry",
      "F:2:89: providers.acme.headers.x-nul: its value holds a NUL character (U+0000), which no HTTP request may carry",
    ]);
  });

  it("refuses an api_key read from a variable with a trailing newline (the provider's or a project's own), without repeating it", async () => {
    const found = await problems(`providers:
  acme: { protocol: openai, api_key: "\${ACME_KEY}" }
projects:
  p:
    keys: []
    providers: { acme: { api_key: "\${P_KEY}" } }
`, { ACME_KEY: "sk-secret-1\n", P_KEY: "sk-secret-2\n" });
    expect(found).toEqual([
      "F:2:38: providers.acme.api_key: its value holds a line feed (U+000A), which no HTTP request may carry (a line break from the variable it was read from?)",
      "F:6:35: projects.p.providers.acme.api_key: its value holds a line feed (U+000A), which no HTTP request may carry (a line break from the variable it was read from?)",
    ]);
  });

  it("takes the headers the docs show, tabs and Latin-1 included", async () => {
    expect(await problems(`providers:
  vertex: { protocol: vertex, project_id: p, api_key: t, headers: { x-goog-user-project: my-billing-project, anthropic-beta: "context-1m-2025-08-07", x-note: "caf\\xE9\\tok" } }
`)).toEqual([]);
  });
});
