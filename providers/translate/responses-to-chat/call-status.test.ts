import { describe, expect, it } from "vitest";
import { callStatus, wholeJson } from "./call-status.ts";

describe("a function call's status", () => {
  it("is incomplete only when the answer was cut before its arguments were whole", () => {
    expect(callStatus("{\"city\":", "incomplete")).toBe("incomplete");
    expect(callStatus("", "incomplete")).toBe("incomplete");
    expect(callStatus("{\"city\":\"Paris\"}", "incomplete")).toBe("completed");
    expect(callStatus("{\"city\":", "completed")).toBe("completed"); // not cut: the upstream's arguments as they are
  });

  it("whole JSON is an object or array that parses", () => {
    expect([wholeJson(" {}"), wholeJson("[1]"), wholeJson("{\"a\":"), wholeJson("1"), wholeJson("\"x\"")]).toEqual([true, true, false, false, false]);
  });
});
