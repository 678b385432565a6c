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

  it("takes an empty value (an unset ${MG_SIGNING_SECRET:-}) as unset: the random per-process secret signs links, and says so", async () => {
    const notices: string[] = [];
    const cfg = await loadConfig(write(`server: { signing_secret: "\${MG_SIGNING_SECRET:-}" }\n`), { env: {}, onNotice: (m) => notices.push(m) });
    expect(cfg.server.signingSecret).toBeUndefined();
    expect(notices).toContain("server.signing_secret is empty (an unset variable?): links are signed with a random secret of this process, " +
      "so every image and video link dies at the next restart; set it to 16 characters or more to keep them");
  });

  it("keeps a secret of 16 characters or more", async () => {
    const notices: string[] = [];
    const cfg = await loadConfig(write(`server: { signing_secret: "\${MG_SIGNING_SECRET}" }\n`), { env: { MG_SIGNING_SECRET: "sixteen-chars-ok" }, onNotice: (m) => notices.push(m) });
    expect(cfg.server.signingSecret).toBe("sixteen-chars-ok");
    expect(notices.filter((m) => m.includes("signing_secret"))).toEqual([]);
  });
});
