import { describe, expect, it } from "vitest";
import { unenforcedPolicyNotices, unusedPluginNotices } from "./policy-notice.ts";
import { builtins } from "../builtins.ts";

const config = {
  projects: {
    acme: { keys: [{ id: "k", sha256: "x" }], budget: { usd: "10" }, allow_models: ["openai/*"] },
    beta: { keys: [{ id: "k", sha256: "y", rate_limits: { rpm: 5 }, budget: { usd: "1" } }] },
    open: { keys: [{ id: "k", sha256: "z" }] },
  },
} as any;

describe("unenforcedPolicyNotices", () => {
  it("names each policy a project configures that the pipeline cannot enforce, and a pipeline that records nothing", () => {
    // The example pipeline docs/plugins.md once showed.
    expect(unenforcedPolicyNotices(config, ["auth", "request-tagger", "router"])).toEqual([
      "pipeline has no usage-metering: no request is recorded in the ledger, so usage, spend, budgets and the console see none of them",
      "pipeline has no budget: budget not enforced for projects acme, beta",
      "pipeline has no rate-limit: rate limits not enforced for project beta",
      "pipeline has no allowlist: allow_models not enforced for project acme",
    ]);
  });

  it("is silent on the default pipeline, and for policies no project configures", () => {
    expect(unenforcedPolicyNotices(config, builtins.defaultPipeline())).toEqual([]);
    expect(unenforcedPolicyNotices({ projects: { open: config.projects.open } } as any, ["auth", "router", "usage-metering"])).toEqual([]);
  });
});

describe("unusedPluginNotices", () => {
  const plugins = { "request-tagger": { module: "./t.ts" }, audit: { module: "./a.ts" } };

  it("names each declared plugin an explicit pipeline leaves out", () => {
    expect(unusedPluginNotices({ plugins, pipeline: ["auth", "audit", "router"] } as any, ["auth", "audit", "router"])).toEqual([
      'plugin "request-tagger" is declared under plugins: but never runs: pipeline: does not list it (add it to pipeline:)',
    ]);
  });

  it("names every declared plugin when there is no pipeline: (the default one has only built-ins)", () => {
    expect(unusedPluginNotices({ plugins } as any, builtins.defaultPipeline())).toEqual([
      'plugin "request-tagger" is declared under plugins: but never runs: there is no pipeline: and the default one runs only built-in plugins (add it to pipeline:)',
      'plugin "audit" is declared under plugins: but never runs: there is no pipeline: and the default one runs only built-in plugins (add it to pipeline:)',
    ]);
  });

  it("is silent when the pipeline runs them all, or none is declared", () => {
    expect(unusedPluginNotices({ plugins, pipeline: ["auth", "request-tagger", "audit"] } as any, ["auth", "request-tagger", "audit"])).toEqual([]);
    expect(unusedPluginNotices({} as any, builtins.defaultPipeline())).toEqual([]);
  });
});
