import { describe, expect, it } from "vitest";
import type { RuntimeConfig } from "../config/runtime.ts";
import type { GatewayContext } from "./context.ts";
import { answerGuard, checkAround, checkingAround, offerAnswerGuard, takeAnswerTap, tapCheckedAnswer, type AnswerGuard } from "./answer-guard.ts";

describe("answerGuard", () => {
  it("finds the check offered for the request's config, and none on a config that offered none (a reload without it)", async () => {
    const guarded = {} as RuntimeConfig;
    const reloaded = {} as RuntimeConfig;
    const seen: string[] = [];
    const check: AnswerGuard = Object.assign(async (answer: () => Promise<void>) => {
      seen.push("before");
      await answer();
      seen.push("after");
    }, { placeholders: false, edits: false });
    offerAnswerGuard(guarded, (ctx) => (ctx.endpoint === "chat" ? check : undefined));
    await answerGuard({ config: guarded, endpoint: "chat" } as GatewayContext)!(async () => void seen.push("answer"));
    expect(seen).toEqual(["before", "answer", "after"]);
    expect(answerGuard({ config: guarded, endpoint: "embeddings" } as GatewayContext)).toBeUndefined();
    expect(answerGuard({ config: reloaded, endpoint: "chat" } as GatewayContext)).toBeUndefined();
  });
});

describe("takeAnswerTap", () => {
  it("hands the checking step the tap a keeping step asked for, once", () => {
    const ctx = {} as GatewayContext;
    const checked = { kind: "json" as const, status: 200, body: { text: "[EMAIL_1], [REDACTED:EMAIL]" } };
    expect(takeAnswerTap(ctx)).toBeUndefined(); // nobody asked
    const seen: unknown[] = [];
    const wrapped = { ...checked, status: 201 };
    tapCheckedAnswer(ctx, (a, editedAfter) => (seen.push([a, editedAfter]), wrapped));
    expect(takeAnswerTap(ctx)!(checked, true)).toBe(wrapped);
    expect(takeAnswerTap(ctx)).toBeUndefined();
    expect(seen).toEqual([[checked, true]]);
  });
});

describe("checkAround", () => {
  it("tells a later step the check already wraps the request, and what it does", () => {
    const ctx = {} as GatewayContext;
    expect(checkAround(ctx)).toBeUndefined();
    checkingAround(ctx, { redacts: "[]", placeholders: true, edits: true });
    expect(checkAround(ctx)).toEqual({ redacts: "[]", placeholders: true, edits: true });
  });
});
