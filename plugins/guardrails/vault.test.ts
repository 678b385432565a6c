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

  it("restores and masks the placeholders of a label that begins with a digit (a rule named 2fa-codes)", () => {
    const v = new Vault();
    expect(v.placeholder("2FA_CODES", "OTP123456")).toBe("[2FA_CODES_1]");
    expect(v.restore("code [2FA_CODES_1], not [2024_1]")).toBe("code OTP123456, not [2024_1]");
    expect(v.mask("code [2FA_CODES_1]")).toBe("code [REDACTED:2FA_CODES]");
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

  /** The old way, kept as the reference: is the tail from each "[" a shorter start of one of `given`? */
  function heldFrom(given: readonly string[], text: string): number {
    const longest = Math.max(...given.map((p) => p.length));
    for (let i = text.length - 1; i >= Math.max(0, text.length - longest + 1); i--) {
      if (text[i] === "[" && given.some((p) => p.length > text.length - i && p.startsWith(text.slice(i)))) return i;
    }
    return text.length;
  }

  it("holds back exactly what the placeholders handed out could still become, labels that begin one another included", () => {
    const v = new Vault();
    const given: string[] = [];
    const give = (label: string, n: number) => { for (let i = 0; i < n; i++) given.push(v.placeholder(label, `${label}-${i}`)); };
    give("API", 3);
    give("API_KEY", 12);
    give("A1", 1);
    give("EMAIL", 120);
    // Every start of those, of some never handed out (a number too high, a leading zero, no number) and plain brackets.
    const others = ["[API_4]", "[API_KEY_13]", "[API_KEY_120]", "[EMAIL_121]", "[EMAIL_0]", "[EMAIL_01]", "[A1_2]", "[A2_1]", "[EMAIL_]", "[link](x)", "[a[a[a", "[[EMAIL_1", "[API_KEY_1[A"];
    let tried = 0;
    for (const p of [...given, ...others]) {
      for (let end = 0; end <= p.length; end++) {
        for (const before of ["", "see ", "[", "[EMAIL_1] "]) {
          const text = before + p.slice(0, end);
          expect(v.partialTail(text), JSON.stringify(text)).toBe(heldFrom(given, text));
          tried++;
        }
      }
    }
    expect(tried).toBeGreaterThan(5000);
  });

  describe("the work of deciding what to hold does not grow with the placeholders handed out", () => {
    // Every step through any Map (the vault's placeholders, its labels): a count of work that does not depend on time.
    const iteratorProto = Object.getPrototypeOf(new Map().keys()) as { next: (...a: unknown[]) => unknown };

    /** Map steps made deciding the tails of an answer full of brackets, with `emails` [EMAIL_n] handed out. */
    function stepsFor(emails: number): number {
      const v = new Vault();
      for (let i = 0; i < emails; i++) v.placeholder("EMAIL", `user${i}@example.com`);
      v.placeholder("CARD", "4111111111111111");
      v.placeholder("PROJECT_NAMES", "Globex"); // the longest either way: both look back as far
      const tails = ["[a", "see [link", "args: [1, 2, [3", "[EMAIL_9", "[EMAIL_99999", "[EMAIL_100001", "[CARD_", "[[[["];
      const next = iteratorProto.next;
      let steps = 0;
      iteratorProto.next = function (this: unknown, ...a: unknown[]) {
        steps++;
        return next.apply(this, a);
      };
      try {
        for (const t of tails) v.partialTail(t);
      } finally {
        iteratorProto.next = next;
      }
      return steps;
    }

    it("100 000 placeholders cost no more Map steps than one", () => {
      const few = stepsFor(1);
      expect(few).toBeGreaterThan(0); // the counter counts
      expect(stepsFor(100_000)).toBeLessThanOrEqual(few);
    });
  });
});
