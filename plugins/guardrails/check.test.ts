import { describe, expect, it } from "vitest";
import { GatewayError } from "../../core/errors.ts";
import { runFor } from "./testkit.ts";

const SECRET = "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA";

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error("not refused");
}

describe("GuardRun on request text", () => {
  it("redacts with placeholders by default, masks when asked, and restores only placeholders", () => {
    const run = runFor({ rules: [{ name: "pii", detect: ["email"], action: "redact" }, { name: "cards", detect: ["card"], action: "redact", redact_with: "mask" }] });
    const out = run.input("mail a@x.io, b@y.io and a@x.io; card 4111111111111111", false);
    expect(out).toBe("mail [EMAIL_1], [EMAIL_2] and [EMAIL_1]; card [REDACTED:CARD]");
    expect(run.restore("to [EMAIL_2] or [EMAIL_1], [REDACTED:CARD]")).toBe("to b@y.io or a@x.io, [REDACTED:CARD]");
    expect(run.ctx.guardrail?.actions).toEqual(["redact:pii", "redact:cards"]);
  });

  it("a block names the rule and the side, never the text", () => {
    const run = runFor({ rules: [{ name: "no-secrets", detect: ["secret"] }] });
    const e = refusal(() => run.input(`key ${SECRET}`, true));
    expect(e).toMatchObject({ status: 400, code: "GUARDRAIL_BLOCKED", details: { rule: "no-secrets", on: "input" } });
    expect(JSON.stringify(e.toJSON())).not.toContain("sk-ant");
    expect(run.ctx.guardrail).toEqual({ actions: ["block:no-secrets"], blocked: "no-secrets" });
  });

  it("except keeps chosen values; the earlier rule wins an overlap", () => {
    const run = runFor({
      rules: [
        { name: "internal", patterns: ["ACME-\\d{4}"], action: "redact", redact_with: "mask" },
        { name: "pii", detect: ["email"], action: "redact", except: ["@acme\\.com$"] },
      ],
    });
    expect(run.input("ask ops@acme.com or joe@gmail.com about ACME-1234", false)).toBe("ask ops@acme.com or [EMAIL_1] about [REDACTED:INTERNAL]");
  });

  it("keywords match whole words in any case; allow rules judge only the latest user turn", () => {
    const run = runFor({ rules: [{ name: "billing-only", type: "allow", keywords: ["invoice", "refund"] }] });
    run.input("You are a support bot about invoices and refunds", false); // a system prompt: not judged
    run.input("What is the weather?", true);
    expect(refusal(() => run.allowVerdict("input"))).toMatchObject({ details: { rule: "billing-only" } });
    const ok = runFor({ rules: [{ name: "billing-only", type: "allow", keywords: ["invoice", "refund"] }] });
    ok.input("Where is my REFUND?", true);
    expect(() => ok.allowVerdict("input")).not.toThrow();
    const none = runFor({ rules: [{ name: "billing-only", type: "allow", keywords: ["invoice"] }] });
    expect(() => none.allowVerdict("input")).not.toThrow(); // no user text this turn (tool results): nothing to judge
  });

  it("flags count once per rule and let the text through unchanged", () => {
    const run = runFor({ rules: [{ name: "competitors", keywords: ["Globex", "Initech"], action: "flag" }] });
    expect(run.input("Globex and initech and GLOBEX", true)).toBe("Globex and initech and GLOBEX");
    expect(run.ctx.guardrail?.actions).toEqual(["flag:competitors"]);
  });
});
