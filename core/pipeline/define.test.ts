import { describe, expect, it } from "vitest";
import { definePlugin } from "./define.ts";

const handle = async (_ctx: unknown, next: () => Promise<void>) => next();

describe("definePlugin", () => {
  it("returns a well-formed definition as given", () => {
    const def = { name: "ok", dependsOn: ["auth"], optionsSchema: { type: "object" }, setup: () => 1, teardown: () => {}, handle };
    expect(definePlugin(def as never)).toBe(def);
  });

  it("refuses a dependsOn that is not an array of plugin names, naming the plugin and the field", () => {
    expect(() => definePlugin({ name: "weird2", dependsOn: "auth", handle } as never)).toThrow(
      'definePlugin(weird2): dependsOn must be an array of plugin names (["auth"]), not "auth"',
    );
    expect(() => definePlugin({ name: "weird3", dependsOn: ["auth", 7], handle } as never)).toThrow(/definePlugin\(weird3\): dependsOn must be/);
  });

  it("refuses an optionsSchema that is no object, and a setup or teardown that is no function", () => {
    expect(() => definePlugin({ name: "s", optionsSchema: "object", handle } as never)).toThrow("definePlugin(s): optionsSchema must be a JSON Schema object");
    expect(() => definePlugin({ name: "u", setup: {}, handle } as never)).toThrow("definePlugin(u): setup must be a function");
    expect(() => definePlugin({ name: "t", teardown: "close", handle } as never)).toThrow("definePlugin(t): teardown must be a function");
  });
});
