import { describe, expect, it } from "vitest";
import { GatewayError } from "../../../core/errors.ts";
import { runFor } from "../testkit.ts";
import { SlotText } from "./slot.ts";

const HEAD = "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm";
const TAIL = "2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA";

describe("SlotText", () => {
  it("restores a placeholder cut anywhere, holding back only the cut placeholder", () => {
    const run = runFor({ rules: [{ name: "pii", detect: ["email"], action: "redact" }] });
    run.input("mail alice@example.com", false);
    const s = new SlotText(run, false);
    expect(s.push("Writing to [EM")).toBe("Writing to ");
    expect(s.push("AIL_")).toBe("");
    expect(s.push("1] now [see")).toBe("alice@example.com now [see");
    expect(s.push(" docs]")).toBe(" docs]");
    expect(s.push(" bye [EMAIL_")).toBe(" bye ");
    expect(s.end()).toBe("[EMAIL_"); // never completed: sent as it came
  });

  it("restores inside streamed JSON with the value escaped", () => {
    const run = runFor({ rules: [{ name: "names", patterns: ['Bob "the" Builder'], action: "redact" }] });
    run.input('I am Bob "the" Builder', false);
    const s = new SlotText(run, true);
    expect(s.push('{"who":"[NAM') + s.push('ES_1]"}')).toBe('{"who":"Bob \\"the\\" Builder"}');
  });

  it("catches a secret cut across two chunks before any of it is released", () => {
    const run = runFor({ rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"] }] });
    const s = new SlotText(run, false);
    expect(s.push("Here it is: " + HEAD)).toBe(""); // held: within the window
    let err: unknown;
    try {
      s.push(TAIL + " done");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).details).toMatchObject({ rule: "no-secrets", on: "output" });
  });

  it("masks a secret cut across chunks when the rule redacts, and releases text once the window has passed it", () => {
    const run = runFor({ rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "redact" }], stream_window: 40 });
    const s = new SlotText(run, false);
    let out = s.push("A long enough preamble before it: " + HEAD);
    expect(out).toBe("A long enough preamble befo"); // what 40 characters followed left
    expect(out).not.toContain("sk-ant");
    out += s.push(TAIL + " done");
    out += s.end();
    expect(out).toBe("A long enough preamble before it: [REDACTED:SECRET] done");
  });

  it("with no output rules and nothing redacted, passes deltas through untouched", () => {
    const run = runFor({ rules: [{ name: "pii", detect: ["email"], action: "redact" }] });
    const s = new SlotText(run, false);
    expect(s.push("[EMAIL_1] stays")).toBe("[EMAIL_1] stays");
  });
});
