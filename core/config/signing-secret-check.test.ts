import { describe, expect, it } from "vitest";
import { loadConfig } from "./load.ts";
import { problems, write } from "./config.testkit.ts";

describe("server.signing_secret", () => {
  it("refuses a secret shorter than 16 characters, naming the field and never repeating the value", async () => {
    const got = await problems(`server: { signing_secret: "short" }\n`);
    expect(got).toEqual([
      "F:1:27: server.signing_secret: must be at least 16 characters (it has 5): a shorter secret can be guessed from one signed link; leave it unset or empty for a random one per process",
    ]);
    expect(got.join("\n")).not.toContain('"short"');
  });

  it("takes an empty value (an unset ${MG_SIGNING_SECRET:-}) as unset: the random per-process secret signs links", async () => {
    const cfg = await loadConfig(write(`server: { signing_secret: "\${MG_SIGNING_SECRET:-}" }\n`), { env: {} });
    expect(cfg.server.signingSecret).toBeUndefined();
  });

  it("keeps a secret of 16 characters or more", async () => {
    const cfg = await loadConfig(write(`server: { signing_secret: "\${MG_SIGNING_SECRET}" }\n`), { env: { MG_SIGNING_SECRET: "sixteen-chars-ok" } });
    expect(cfg.server.signingSecret).toBe("sixteen-chars-ok");
  });
});
