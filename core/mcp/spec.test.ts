import { describe, expect, it } from "vitest";
import { qualify, unqualify, unwrapUri, wrapUri } from "./spec.ts";

describe("MCP names", () => {
  it("server__tool splits at the first separator, so tool names may hold __ themselves", () => {
    expect(qualify("docs", "search")).toBe("docs__search");
    expect(unqualify("docs__search")).toEqual(["docs", "search"]);
    expect(unqualify("git_hub__read__file")).toEqual(["git_hub", "read__file"]);
    expect(unqualify("nosep")).toBeUndefined();
    expect(unqualify("__x")).toBeUndefined();
    expect(unqualify("docs__")).toBeUndefined();
  });

  it("resource URIs and templates are wrapped as mcpgw://server/<original>", () => {
    expect(wrapUri("docs", "file:///a/b.md")).toBe("mcpgw://docs/file:///a/b.md");
    expect(unwrapUri("mcpgw://docs/file:///a/b.md")).toEqual(["docs", "file:///a/b.md"]);
    expect(unwrapUri(wrapUri("gh", "repo://{owner}/{name}"))).toEqual(["gh", "repo://{owner}/{name}"]);
    expect(unwrapUri("file:///a")).toBeUndefined();
    expect(unwrapUri("mcpgw://docs/")).toBeUndefined();
  });
});
