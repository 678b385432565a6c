import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/load.ts";
import { problems, write } from "../config/config.testkit.ts";
import { corsPolicy, DEFAULT_CORS_MAX_AGE_S } from "./cors-policy.ts";

describe("server.cors in gateway.yaml", () => {
  it("off unless origins are listed: unset, or an empty list", async () => {
    expect((await loadConfig(write("server: { port: 8787 }\n"), { env: {} })).server.cors).toBeUndefined();
    expect((await loadConfig(write("server:\n  cors: { allow_origins: [] }\n"), { env: {} })).server.cors).toBeUndefined();
  });

  it("loads the origins, the extra headers and the max age (default 600 s)", async () => {
    const on = (await loadConfig(write('server:\n  cors:\n    allow_origins: ["http://localhost:5173"]\n    allow_headers: [X-Team]\n'), { env: {} })).server.cors!;
    expect(on.origins.allows("http://localhost:5173")).toBe(true);
    expect(on.headers.allow("x-team")).toBe("x-team");
    expect(on.maxAge).toBe(String(DEFAULT_CORS_MAX_AGE_S));
    expect(corsPolicy({ allow_origins: ["*"], max_age_s: 0 }).policy!.maxAge).toBe("0");
  });

  it("names the entry that is no origin, at its line and column, with the spelling that would match", async () => {
    expect(await problems('server:\n  cors:\n    allow_origins: ["http://localhost:5173", "https://app.example.com/"]\n')).toEqual([
      'F:3:46: server.cors.allow_origins[1]: "https://app.example.com/" is not an origin as browsers send it (scheme://host[:port]: lower case, no path or trailing slash, no default port): write "https://app.example.com"',
    ]);
  });

  it("the schema names a missing origin list, a field it does not know, a header that is no header name, a max age out of range", async () => {
    expect(await problems('server:\n  cors:\n    allow_origin: ["*"]\n    max_age_s: 100000\n    allow_headers: ["bad header"]\n')).toEqual([
      'F:3:5: server.cors: missing required field "allow_origins"',
      'F:3:5: server.cors: unknown field "allow_origin" (did you mean "allow_origins"?)',
      'F:5:21: server.cors.allow_headers.0: must match pattern "^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$"',
      "F:4:16: server.cors.max_age_s: must be <= 86400",
    ]);
  });
});
