import { describe, expect, it } from "vitest";
import type { GatewayContext } from "../pipeline/context.ts";
import { answerAllowed, continuesByHistory, keepStoredThrough, keptParts } from "./stored-view.ts";

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

  it("allows the save at once without a step's verdict, and as the verdict says with one", async () => {
    const plain = {} as GatewayContext;
    const viewed = {} as GatewayContext;
    const moderated = {} as GatewayContext;
    const judged: unknown[] = [];
    keepStoredThrough(viewed, (p) => p);
    keepStoredThrough(moderated, (p) => p, false, async (response) => {
      judged.push(response.id);
      return false;
    });
    expect(answerAllowed(plain, parts().response)).toBe(true);
    expect(answerAllowed(viewed, parts().response)).toBe(true);
    expect(await answerAllowed(moderated, parts().response)).toBe(false);
    expect(judged).toEqual(["resp_1"]);
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
