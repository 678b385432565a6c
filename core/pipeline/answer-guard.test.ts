import { describe, expect, it } from "vitest";
import type { RuntimeConfig } from "../config/runtime.ts";
import type { GatewayContext } from "./context.ts";
import { answerBeforeCheck, answerGuard, checkAround, checkingAround, offerAnswerGuard, tapAnswerBeforeCheck, type AnswerGuard } from "./answer-guard.ts";

describe("answerGuard", () => {
  it("finds the check offered for the request's config, and none on a config that offered none (a reload without it)", async () => {
    const guarded = {} as RuntimeConfig;
    const reloaded = {} as RuntimeConfig;
    const seen: string[] = [];
    const check: AnswerGuard = Object.assign(async (answer: () => Promise<void>) => {
      seen.push("before");
      await answer();
      seen.push("after");
    }, { redacts: false, edits: false });
    offerAnswerGuard(guarded, (ctx) => (ctx.endpoint === "chat" ? check : undefined));
    await answerGuard({ config: guarded, endpoint: "chat" } as GatewayContext)!(async () => void seen.push("answer"));
    expect(seen).toEqual(["before", "answer", "after"]);
    expect(answerGuard({ config: guarded, endpoint: "embeddings" } as GatewayContext)).toBeUndefined();
    expect(answerGuard({ config: reloaded, endpoint: "chat" } as GatewayContext)).toBeUndefined();
  });
});

describe("answerBeforeCheck", () => {
  it("hands the answer to the step that asked once, and the check goes on with what the tap returned", () => {
    const ctx = {} as GatewayContext;
    const provider = { kind: "json" as const, status: 200, body: { text: "as the provider sent it" } };
    expect(answerBeforeCheck(ctx, provider)).toBe(provider); // nobody asked
    const seen: unknown[] = [];
    const wrapped = { ...provider, status: 201 };
    tapAnswerBeforeCheck(ctx, (a) => (seen.push(a), wrapped));
    expect(answerBeforeCheck(ctx, provider)).toBe(wrapped);
    expect(answerBeforeCheck(ctx, provider)).toBe(provider);
    expect(seen).toEqual([provider]);
  });
});

describe("checkAround", () => {
  it("tells a later step the check already wraps the request, and what it does", () => {
    const ctx = {} as GatewayContext;
    expect(checkAround(ctx)).toBeUndefined();
    checkingAround(ctx, { redacts: true, edits: true });
    expect(checkAround(ctx)).toEqual({ redacts: true, edits: true });
  });
});
