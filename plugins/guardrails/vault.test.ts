import { describe, expect, it } from "vitest";
import { Vault } from "./vault.ts";

describe("Vault", () => {
  it("gives each distinct value one placeholder per label and restores them", () => {
    const v = new Vault();
    expect(v.placeholder("EMAIL", "a@x.io")).toBe("[EMAIL_1]");
    expect(v.placeholder("EMAIL", "b@x.io")).toBe("[EMAIL_2]");
    expect(v.placeholder("EMAIL", "a@x.io")).toBe("[EMAIL_1]");
    expect(v.placeholder("CARD", "4111111111111111")).toBe("[CARD_1]");
    expect(v.restore("to [EMAIL_2] and [EMAIL_1], not [EMAIL_3] or [link]")).toBe("to b@x.io and a@x.io, not [EMAIL_3] or [link]");
  });

  it("masks its own placeholders by kind for what outlives the request, and leaves others' brackets", () => {
    const v = new Vault();
    v.placeholder("EMAIL", "a@x.io");
    v.placeholder("PROJECT_NAMES", "PROJ-1234");
    expect(v.mask("to [EMAIL_1] on [PROJECT_NAMES_1], not [EMAIL_2] or [link]")).toBe("to [REDACTED:EMAIL] on [REDACTED:PROJECT_NAMES], not [EMAIL_2] or [link]");
    expect(new Vault().mask("[EMAIL_1]")).toBe("[EMAIL_1]");
  });

  it("holds back only a tail that can still become one of its placeholders", () => {
    const v = new Vault();
    v.placeholder("EMAIL", "a@x.io"); // [EMAIL_1]
    expect(v.partialTail("write to [EMA")).toBe("write to ".length);
    expect(v.partialTail("write to [")).toBe("write to ".length);
    expect(v.partialTail("write to [EMAIL_1")).toBe("write to ".length);
    expect(v.partialTail("write to [EMAIL_1]")).toBe("write to [EMAIL_1]".length); // complete: nothing to hold
    expect(v.partialTail("see [link")).toBe("see [link".length); // cannot become a placeholder
    expect(v.partialTail("no brackets")).toBe("no brackets".length);
    expect(new Vault().partialTail("[EMA")).toBe(4); // nothing handed out: never hold
  });
});
