// What a guardrail's refusal leaves behind: a content block and a moderation outage are told apart in the request's
// record, its access-log line and gateway_guardrail_actions_total, so an alert on blocks does not fire for outages.
import { describe, expect, it } from "vitest";
import { guardContext } from "./testkit.ts";
import { blocked, unavailable } from "./record.ts";

async function actionsCounted(ctx: ReturnType<typeof guardContext>): Promise<string[]> {
  const text = await ctx.gateway.metrics.registry.metrics();
  return text.split("\n").filter((l) => l.startsWith("gateway_guardrail_actions_total{"));
}

describe("a fail_closed moderation that could not answer", () => {
  it.each([true, false])("is noted as moderation-unavailable, not as a block by the moderation (retryable: %s)", async (retryable) => {
    const ctx = guardContext();
    const err = unavailable(ctx, "moderation", "output", "the moderation model failed", retryable);
    expect(err.code).toBe("GUARDRAIL_UNAVAILABLE");
    expect(err.details).toMatchObject({ rule: "moderation", on: "output" }); // the client is told which guardrail could not check
    expect(ctx.guardrail!.actions).toEqual(["block:moderation-unavailable"]); // the ledger record and the access log
    expect(await actionsCounted(ctx)).toEqual(['gateway_guardrail_actions_total{rule="moderation-unavailable",action="block"} 1']);
  });
});

describe("a block by the moderation's verdict", () => {
  it("is noted under the moderation's own rule", async () => {
    const ctx = guardContext();
    blocked(ctx, "moderation", "input");
    expect(ctx.guardrail!.actions).toEqual(["block:moderation"]);
    expect(await actionsCounted(ctx)).toEqual(['gateway_guardrail_actions_total{rule="moderation",action="block"} 1']);
  });
});
