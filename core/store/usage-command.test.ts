import { describe, expect, it } from "vitest";
import { parseSince, summarize } from "./usage-command.ts";
import type { LedgerEntry } from "./types.ts";

const e = (project: string, model: string, costUsd: string, tokens: number): LedgerEntry => ({
  generationId: `${project}${model}${costUsd}${tokens}`, requestId: "r", ts: 0, keyId: "k", project, endpoint: "chat", model, provider: "p",
  attempts: 1, inputTokens: tokens, outputTokens: tokens * 2, cacheReadTokens: 1, cacheWriteTokens: 0, reasoningTokens: 0, images: 0,
  videoSeconds: 0, searchUnits: 0, costUsd, costPico: 0n, latencyMs: 1, ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false,
});

describe("usage command", () => {
  it("sums requests, tokens and exact cost per project and model", () => {
    const rows = summarize([e("b", "m1", "0.1", 1), e("a", "m2", "0.2", 2), e("b", "m1", "0.2", 3), e("a", "m1", "0.0000001", 4)]);
    expect(rows.map((r) => [r.project, r.model, r.requests, r.inputTokens, r.outputTokens, r.cacheReadTokens, r.costUsd])).toEqual([
      ["a", "m1", 1, 4, 8, 1, "0.0000001"],
      ["a", "m2", 1, 2, 4, 1, "0.2"],
      ["b", "m1", 2, 4, 8, 2, "0.3"],
    ]);
  });

  it("MCP tool calls are rows of their own, named mcp:server/tool, counted as requests", () => {
    const call = (tool: string, endpoint = "mcp_tool") => ({ ...e("a", tool, "0", 0), generationId: `${tool}${Math.random()}`, endpoint, provider: "docs", cacheReadTokens: 0, toolBytes: 30 });
    const rows = summarize([call("search"), call("search", "responses_mcp_tool"), call("fetch"), e("a", "search", "0.1", 1)]);
    expect(rows.map((r) => [r.model, r.requests, r.inputTokens, r.costUsd])).toEqual([
      ["mcp:docs/fetch", 1, 0, "0"],
      ["mcp:docs/search", 2, 0, "0"],
      ["search", 1, 1, "0.1"],
    ]);
  });

  it("--since takes dates, timestamps and relative spans", () => {
    const now = Date.parse("2026-11-21T12:00:00Z");
    expect(parseSince("2026-11-01", now)).toBe(Date.parse("2026-11-01T00:00:00Z"));
    expect(parseSince("24h", now)).toBe(now - 86_400_000);
    expect(parseSince("7d", now)).toBe(now - 7 * 86_400_000);
    expect(parseSince("30m", now)).toBe(now - 1_800_000);
    expect(() => parseSince("yesterday", now)).toThrow(/--since yesterday/);
  });
});
