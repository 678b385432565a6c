import { describe, expect, it } from "vitest";
import { unenforcedPolicyNotices } from "./policy-notice.ts";
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
