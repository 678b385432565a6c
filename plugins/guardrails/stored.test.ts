import { describe, expect, it } from "vitest";
import { runFor } from "./testkit.ts";
import { storedView } from "./stored.ts";
import type { GuardrailsConfig } from "../../core/generated/types/gateway.ts";

const RULES: GuardrailsConfig = {
  rules: [
    { name: "pii", detect: ["email"], action: "redact" },
    { name: "bank", detect: ["iban"], on: ["output"], action: "redact" },
    { name: "no-secrets", detect: ["secret"], on: ["output"], action: "block" },
  ],
};
const IBAN = "DE89 3704 0044 0532 0130 00";

const message = (text: string) => ({ type: "message", role: "assistant", id: "msg_1", content: [{ type: "output_text", text }] });

describe("storedView", () => {
  it("keeps the answer with the output rules applied and placeholders masked, leaving the client's answer and reasoning as they are", () => {
    const run = runFor(RULES, "responses");
    const asked = run.input("write to a@x.io", true);
    expect(asked).toBe("write to [EMAIL_1]");
    const reasoning = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "about [EMAIL_1]" }], encrypted_content: "blob" };
    const call = { type: "function_call", id: "fc_1", call_id: "c1", name: "send", arguments: JSON.stringify({ to: "[EMAIL_1]", iban: IBAN }) };
    const response = { id: "resp_1", instructions: "Reply to [EMAIL_1].", output: [message(`To [EMAIL_1], pay ${IBAN}.`), call] };
    const input = [{ type: "message", role: "user", id: "msg_0", content: [{ type: "input_text", text: asked }] }];

    const kept = storedView(run)({ response, input, fullOutput: [reasoning, ...response.output] })!;

    expect(kept.response.instructions).toBe("Reply to [REDACTED:EMAIL].");
    expect((kept.response.output as any)[0].content[0].text).toBe("To [REDACTED:EMAIL], pay [REDACTED:IBAN].");
    expect(JSON.parse((kept.response.output as any)[1].arguments)).toEqual({ to: "[REDACTED:EMAIL]", iban: "[REDACTED:IBAN]" });
    expect((kept.input[0] as any).content[0].text).toBe("write to [REDACTED:EMAIL]");
    expect(kept.fullOutput![0]).toEqual(reasoning);
    expect((kept.fullOutput![1] as any).content[0].text).toBe("To [REDACTED:EMAIL], pay [REDACTED:IBAN].");
    // The client's answer is checked (and restored) on its own afterwards: it is not edited here.
    expect((response.output[0] as any).content[0].text).toBe(`To [EMAIL_1], pay ${IBAN}.`);
    expect(run.ctx.guardrail?.actions ?? []).not.toContain("redact:bank");
  });

  it("keeps nothing of an answer a block rule or an allow rule refuses, without refusing it itself", () => {
    const secret = "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA";
    const run = runFor(RULES, "responses");
    expect(storedView(run)({ response: { output: [message(`here: ${secret}`)] }, input: [] })).toBeUndefined();
    expect(run.ctx.guardrail?.blocked).toBeUndefined();

    const billing = runFor({ rules: [{ name: "billing-only", type: "allow", keywords: ["invoice"], on: ["output"], action: "block" }] }, "responses");
    expect(storedView(billing)({ response: { output: [message("the weather is fine")] }, input: [] })).toBeUndefined();
    expect(storedView(billing)({ response: { output: [message("your invoice is paid")] }, input: [] })).toBeDefined();
  });

  it("keeps the input items as they are when the request handed out no placeholder", () => {
    const run = runFor(RULES, "responses");
    const input = [{ type: "message", role: "user", content: [{ type: "input_text", text: "[EMAIL_1] is mine" }] }];
    expect(storedView(run)({ response: { output: [] }, input })!.input).toBe(input);
  });
});
