import { describe, expect, it } from "vitest";
import type { GatewayContext } from "../pipeline/context.ts";
import { continuesByHistory, keepStoredThrough, keptAs, keptParts, refuseKept } from "./stored-view.ts";

const parts = () => ({ response: { id: "resp_1", output: [] }, input: [{ type: "message", role: "user", content: "[EMAIL_1]" }] });

describe("keptParts", () => {
  it("keeps a request's parts as they are (the same objects) when no step asked for a view", () => {
    const p = parts();
    expect(keptParts({} as GatewayContext, p)).toBe(p);
  });

  it("keeps them through the view a step set for that request only, and nothing when the view refuses", () => {
    const masked = {} as GatewayContext;
    const refused = {} as GatewayContext;
    keepStoredThrough(masked, (p) => ({ ...p, input: [{ type: "message", role: "user", content: "[REDACTED:EMAIL]" }] }));
    keepStoredThrough(refused, () => undefined);
    expect(keptParts(masked, parts())!.input).toEqual([{ type: "message", role: "user", content: "[REDACTED:EMAIL]" }]);
    expect(keptParts(refused, parts())).toBeUndefined();
    const p = parts();
    expect(keptParts({} as GatewayContext, p)).toBe(p);
  });

  it("takes a record kept through a view back when the step refuses the answer after it was saved; nothing else", async () => {
    const viewed = {} as GatewayContext;
    const plain = {} as GatewayContext;
    const taken: string[] = [];
    keepStoredThrough(viewed, (p) => p);
    keptAs(viewed, async () => void taken.push("viewed"));
    keptAs(plain, async () => void taken.push("plain"));
    await refuseKept(plain);
    expect(taken).toEqual([]);
    await refuseKept(viewed);
    await refuseKept(viewed);
    expect(taken).toEqual(["viewed"]);
    expect(keptParts(viewed, parts())).toBeUndefined();
  });

  it("continues a chain by the history as kept only for a request whose step asked", () => {
    const numbered = {} as GatewayContext;
    const masked = {} as GatewayContext;
    keepStoredThrough(numbered, (p) => p, true);
    keepStoredThrough(masked, (p) => p);
    expect(continuesByHistory(numbered)).toBe(true);
    expect(continuesByHistory(masked)).toBe(false);
    expect(continuesByHistory({} as GatewayContext)).toBe(false);
  });
});
