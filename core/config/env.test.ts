import { describe, expect, it } from "vitest";
import { interpolate } from "./env.ts";
import { loadConfig } from "./load.ts";
import { problems, write } from "./config.testkit.ts";

describe("interpolate", () => {
  it("replaces set variables and defaults", () => {
    expect(interpolate("${A}/${B:-x}/${C:-}", { A: "1" })).toEqual({ value: "1/x/", missing: [] });
  });
  it("reports unset variables without a default", () => {
    expect(interpolate("k=${KEY}", {})).toEqual({ value: "k=", missing: ["KEY"] });
  });
  it("treats an empty variable as unset, so the default applies", () => {
    expect(interpolate("${P:-8787}", { P: "" }).value).toBe("8787");
  });
});

describe("references the gateway does not expand", () => {
  const provider = (apiKey: string) => `
providers:
  openai: { protocol: openai, api_key: "${apiKey}" }
models:
  a/m: { endpoints: [{ provider: sim, model: m }] }
`;

  it("are problems at the field, not values sent as written (even as a provider's api_key)", async () => {
    expect(await problems(provider("\${OPENAI_API_KEY-sk-dev}"), { OPENAI_API_KEY: "sk-1" })).toEqual([
      "F:3:40: providers.openai.api_key: ${OPENAI_API_KEY-sk-dev} is not expanded (the shell's form without ':'): use ${OPENAI_API_KEY:-sk-dev}",
    ]);
    expect(await problems(provider("$OPENAI_API_KEY"), { OPENAI_API_KEY: "sk-1" })).toEqual([
      "F:3:40: providers.openai.api_key: $OPENAI_API_KEY is not expanded: write ${OPENAI_API_KEY} (or ${OPENAI_API_KEY:-default}), or, if the $ is literal, put the whole value in an environment variable and write ${NAME}",
    ]);
    // A key that holds a $ of its own is told how to keep it, not only to brace it.
    expect(await problems(provider("sk-ab$Cd"))).toEqual([
      "F:3:40: providers.openai.api_key: $C is not expanded: write ${C} (or ${C:-default}), or, if the $ is literal, put the whole value in an environment variable and write ${NAME}",
    ]);
    expect(await problems(provider("\${OPENAI_API_KEY"), { OPENAI_API_KEY: "sk-1" })).toEqual([
      "F:3:40: providers.openai.api_key: ${OPENAI_API_KEY is not closed: write ${OPENAI_API_KEY} (or ${OPENAI_API_KEY:-default})",
    ]);
    expect(await problems(provider("\${OPENAI_API_KEY:=sk-dev}"), { OPENAI_API_KEY: "sk-1" })).toEqual([
      "F:3:40: providers.openai.api_key: ${OPENAI_API_KEY:=sk-dev} is not expanded: only ${NAME} and ${NAME:-default} are (use ${OPENAI_API_KEY:-sk-dev})",
    ]);
  });

  it("in a path, say where earlier releases (which used the text as written) left their data", async () => {
    const store = `
store: { kind: sqlite, path: "\${DB_PATH-./data/gw.db}" }
models:
  a/m: { endpoints: [{ provider: sim, model: m }] }
`;
    const [problem] = await problems(store);
    expect(problem).toContain("store.path: ${DB_PATH-./data/gw.db} is not expanded (the shell's form without ':'): use ${DB_PATH:-./data/gw.db}");
    // Following only the advice above would start on a new, empty store: the old one is a file named as written.
    expect(problem).toContain("releases before this one used this text as written");
    expect(problem).toContain("a file or directory literally named ${DB_PATH-./data/gw.db}");
  });

  it("leave valid references and plain dollar signs alone", async () => {
    const file = write(`${provider("k-\${OPENAI_API_KEY}-$5-$lower")}server: { public_url: "https://x.example/\${PREFIX:-p}" }\n`);
    const config = await loadConfig(file, { env: { OPENAI_API_KEY: "sk-1" } });
    expect(config.providers.get("openai")!.api_key).toBe("k-sk-1-$5-$lower");
    expect(config.server.publicUrl).toBe("https://x.example/p");
  });
});

describe("an empty variable", () => {
  it("is said to be empty, not unset", async () => {
    expect(await problems(`server: { public_url: "\${PUBLIC_URL}" }\n`, { PUBLIC_URL: "" })).toEqual([
      "F:1:23: server.public_url: environment variable PUBLIC_URL is empty and has no default (write ${PUBLIC_URL:-default})",
    ]);
    const notices: string[] = [];
    await loadConfig(write(`providers:\n  openai: { protocol: openai, api_key: "\${A}\${B}" }\n`), { env: { A: "" }, onNotice: (m) => notices.push(m) });
    expect(notices).toEqual(['provider "openai" disabled: $B is not set, $A is empty']);
  });
});
