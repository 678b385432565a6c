import { describe, expect, it } from "vitest";
import { RouteMethods, withHead } from "./route-methods.ts";

describe("RouteMethods", () => {
  const routes = new RouteMethods();
  routes.add("POST", "/api/v1/chat/completions");
  routes.add("GET", "/api/v1/responses/:id");
  routes.add("DELETE", "/api/v1/responses/:id");
  routes.add("GET", "/api/v1/responses/:id/input_items");
  routes.add("POST", "/api/v1beta/models/**");
  routes.add("GET", "/api/v1beta/models/**");

  it("exact and parameter routes, every method a path is served with", () => {
    expect(routes.for("/api/v1/chat/completions")).toEqual(["POST"]);
    expect(routes.for("/api/v1/responses/resp_123")).toEqual(["GET", "DELETE"]);
    expect(routes.for("/api/v1/responses/resp_123/input_items")).toEqual(["GET"]);
    expect(routes.for("/api/v1beta/models/gemini-2.5-flash:generateContent")).toEqual(["POST", "GET"]);
  });

  it("a parameter is one non-empty segment; other paths have no methods", () => {
    expect(routes.for("/api/v1/responses/")).toEqual([]);
    expect(routes.for("/api/v1/responses/a/b")).toEqual([]);
    expect(routes.for("/api/v1/chat/completions/x")).toEqual([]);
    expect(routes.for("/api/v1/chat.completions")).toEqual([]);
  });
});

describe("withHead", () => {
  it("a GET route is served with HEAD too (RFC 9110 §9.1); other methods alone", () => {
    expect(withHead("GET")).toEqual(["GET", "HEAD"]);
    expect(withHead("POST")).toEqual(["POST"]);
    expect(withHead("delete")).toEqual(["DELETE"]);
  });
});
