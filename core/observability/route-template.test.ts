import { describe, expect, it } from "vitest";
import { routeTemplate } from "./route-template.ts";
import { endpoints } from "../endpoints/index.ts";

describe("routeTemplate", () => {
  it("names parameters, never their values", () => {
    expect(routeTemplate({ route: "/api/v1/responses/:id" })).toBe("/api/v1/responses/{id}");
    expect(routeTemplate({ route: "/api/v1/models/:creator/:model/endpoints" })).toBe("/api/v1/models/{creator}/{model}/endpoints");
    expect(routeTemplate({ route: "/api/v1/chat/completions" })).toBe("/api/v1/chat/completions");
  });

  it("a Gemini custom method is its action on a model placeholder", () => {
    expect(routeTemplate({ route: "/api/v1beta/models/**", action: "streamGenerateContent" })).toBe("/api/v1beta/models/{model}:streamGenerateContent");
  });

  it("every endpoint's template is free of the router's wildcards", () => {
    for (const spec of endpoints) expect(routeTemplate(spec)).not.toMatch(/\*|\/:/);
  });
});
