import { describe, expect, it } from "vitest";
import { interpolate } from "./env.ts";

describe("interpolate", () => {
  it("replaces set variables and defaults", () => {
    expect(interpolate("${A}/${B:-x}/${C:-}", { A: "1" })).toEqual({ value: "1/x/", missing: [] });
  });
  it("reports unset variables without a default", () => {
    expect(interpolate("k=${KEY}", {})).toEqual({ value: "k=", missing: ["KEY"] });
  });
  it("treats an empty variable as unset, so the default applies", () => {
    expect(interpolate("${P:-8787}", { P: "" }).value).toBe("8787");
  });
});
