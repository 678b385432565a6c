import { describe, expect, it } from "vitest";
import { GatewayError } from "../../../core/errors.ts";
import { runFor } from "../testkit.ts";
import { SlotText } from "./slot.ts";

const HEAD = "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm";
const TAIL = "2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA";

describe("SlotText", () => {
  it("restores a placeholder cut anywhere, holding back only the cut placeholder", () => {
    const run = runFor({ rules: [{ name: "pii", detect: ["email"], action: "redact" }] });
    run.input("mail alice@example.com", false);
    const s = new SlotText(run, false);
    expect(s.push("Writing to [EM")).toBe("Writing to ");
    expect(s.push("AIL_")).toBe("");
    expect(s.push("1] now [see")).toBe("alice@example.com now [see");
    expect(s.push(" docs]")).toBe(" docs]");
    expect(s.push(" bye [EMAIL_")).toBe(" bye ");
    expect(s.end()).toBe("[EMAIL_"); // never completed: sent as it came
  });

  it("with 100 000 placeholders handed out, restores one cut across any two deltas and sends brackets that begin none at once", () => {
    const run = runFor({ rules: [{ name: "pii", detect: ["email"], action: "redact" }] });
    for (let i = 1; i <= 100_000; i++) run.vault.placeholder("EMAIL", `user${i}@example.com`);
    const answer = "Mail [EMAIL_99999], [EMAIL_7] and [EMAIL_100000]; not [EMAIL_100001] or [a link].";
    const restored = "Mail user99999@example.com, user7@example.com and user100000@example.com; not [EMAIL_100001] or [a link].";
    for (let cut = 0; cut <= answer.length; cut++) {
      const s = new SlotText(run, false);
      expect(s.push(answer.slice(0, cut)) + s.push(answer.slice(cut)) + s.end(), `cut at ${cut}`).toBe(restored);
    }
    const s = new SlotText(run, false);
    expect(s.push("see [a")).toBe("see [a");
    expect(s.push(" link] and [EMAIL_99")).toBe(" link] and ");
  });

  it("restores inside streamed JSON with the value escaped", () => {
    const run = runFor({ rules: [{ name: "names", patterns: ['Bob "the" Builder'], action: "redact" }] });
    run.input('I am Bob "the" Builder', false);
    const s = new SlotText(run, true);
    expect(s.push('{"who":"[NAM') + s.push('ES_1]"}')).toBe('{"who":"Bob \\"the\\" Builder"}');
  });

  it("catches a secret cut across two chunks before any of it is released", () => {
    const run = runFor({ rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"] }] });
    const s = new SlotText(run, false);
    expect(s.push("Here it is: " + HEAD)).toBe(""); // held: within the window
    let err: unknown;
    try {
      s.push(TAIL + " done");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).details).toMatchObject({ rule: "no-secrets", on: "output" });
  });

  it("masks a secret cut across chunks when the rule redacts, and releases text once the window has passed it", () => {
    const run = runFor({ rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "redact" }], stream_window: 40 });
    const s = new SlotText(run, false);
    let out = s.push("A long enough preamble before it: " + HEAD);
    expect(out).toBe("A long enough preamble befo"); // what 40 characters followed left
    expect(out).not.toContain("sk-ant");
    out += s.push(TAIL + " done");
    out += s.end();
    expect(out).toBe("A long enough preamble before it: [REDACTED:SECRET] done");
  });

  it("with no output rules and nothing redacted, passes deltas through untouched", () => {
    const run = runFor({ rules: [{ name: "pii", detect: ["email"], action: "redact" }] });
    const s = new SlotText(run, false);
    expect(s.push("[EMAIL_1] stays")).toBe("[EMAIL_1] stays");
  });
});

describe("SlotText on streamed JSON (tool-call arguments): rules see the values as the client's parser will", () => {
  // Every character of the key escaped the way an upstream may write it, and a keyword with its first letter escaped.
  const ESCAPED_KEY = [...(HEAD + TAIL)].map((c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")).join("");
  const RULES = {
    rules: [
      { name: "no-secrets", detect: ["secret" as const], on: ["output" as const] },
      { name: "pii", detect: ["email" as const], on: ["output" as const], action: "redact" as const },
      { name: "globex", keywords: ["Globex"], on: ["output" as const], action: "redact" as const },
    ],
  };

  /** What the client gets for `chunks`, and the error that cut it (if one did). */
  function stream(chunks: string[]): { sent: string; err?: GatewayError } {
    const s = new SlotText(runFor(RULES), true);
    let sent = "";
    try {
      for (const c of chunks) sent += s.push(c);
      sent += s.end();
    } catch (e) {
      return { sent, err: e as GatewayError };
    }
    return { sent };
  }

  it("blocks an escaped key, whole or cut anywhere across two chunks (an escape cut in two included), before any of it is sent", () => {
    const args = `{"q":"Here it is: ${ESCAPED_KEY} done"}`;
    for (let cut = 0; cut <= args.length; cut++) {
      const { sent, err } = stream([args.slice(0, cut), args.slice(cut)]);
      expect(err, `cut at ${cut}`).toBeInstanceOf(GatewayError);
      expect(err!.details).toMatchObject({ rule: "no-secrets", on: "output" });
      expect(sent).not.toContain("\\u0073\\u006b"); // not even "sk" of it
    }
  });

  it("masks an escaped email and keyword in the raw text, cut anywhere across chunks; the arguments stay valid JSON", () => {
    const args = '{"to":"b\\u006fb@example.com","note":"\\u0047lobex \\"quoted\\" \\\\u0047lobex"}';
    for (let cut = 0; cut <= args.length; cut++) {
      const { sent, err } = stream([args.slice(0, cut), args.slice(cut)]);
      expect(err).toBeUndefined();
      // The escaped backslash before the last u0047 makes it no escape: the client reads the text `\u0047lobex`.
      expect(JSON.parse(sent), `cut at ${cut}`).toEqual({ to: "[REDACTED:EMAIL]", note: '[REDACTED:GLOBEX] "quoted" \\u0047lobex' });
    }
  });

  it("the window counts decoded characters: an escaped key streamed in small chunks is still caught whole", () => {
    const args = `{"q":"Here it is: ${ESCAPED_KEY} done"}`;
    for (let size = 1; size <= 9; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < args.length; i += size) chunks.push(args.slice(i, i + size));
      const { sent, err } = stream(chunks);
      expect(err, `chunks of ${size}`).toBeInstanceOf(GatewayError);
      expect(sent).not.toContain("\\u0073\\u006b");
    }
  });

  it("a chunk ending in an escape's start holds back only that escape", () => {
    const s = new SlotText(runFor({ ...RULES, stream_window: 0 }), true);
    expect(s.push('{"q":"ok \\u00')).toBe('{"q":"ok ');
    expect(s.push('41"}')).toBe('\\u0041"}');
  });
});

describe("SlotText cut by a block rule: the text before the match that had cleared the window reaches the client", () => {
  // docs/guardrails.md's example output rules, stream_window 64.
  const RULES = {
    rules: [
      { name: "no-secrets", detect: ["secret" as const], on: ["output" as const] },
      { name: "project-names", patterns: ["\\bPROJ-[0-9]{4}\\b"], on: ["output" as const], action: "redact" as const, redact_with: "mask" as const },
      { name: "competitors", keywords: ["Globex"], on: ["output" as const], action: "flag" as const },
    ],
    stream_window: 64,
  };
  const KEY = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
  const CLEAN = "AAAAAAAAAA BBBBBBBBBB CCCCCCCCCC DDDDDDDDDD EEEEEEEEEE FFFFFFFFFF GGGGGGGGGG HHHHHHHHHH invoice token ";
  const ANSWER = CLEAN + KEY + " then more text after it.";
  /** Enough text after a match for the window to have passed where it starts. */
  const PAST_WINDOW = " and more".repeat(8);

  /** What the client gets: each push's release, then (after the block) what end() still has. */
  function stream(chunks: string[], rules: object = RULES, json = false): { sent: string; err?: GatewayError; run: ReturnType<typeof runFor> } {
    const run = runFor(rules as any);
    const s = new SlotText(run, json);
    let sent = "";
    try {
      for (const c of chunks) sent += s.push(c);
      sent += s.end();
    } catch (e) {
      expect(s.cut).toBe(true);
      return { sent: sent + s.end(), err: e as GatewayError, run };
    }
    return { sent, run };
  }
  const chunksOf = (text: string, size: number) => text.match(new RegExp(`.{1,${size}}`, "gs"))!;

  it.each([1, 5, 13, 64, ANSWER.length])("in chunks of %d characters: the text 64 characters behind the chunk that completes the key, none of the key", (size) => {
    const { sent, err } = stream(chunksOf(ANSWER, size));
    expect(err?.details).toMatchObject({ rule: "no-secrets", on: "output" });
    // The key is a hit once its 36th character has come: what had 64 characters after it then goes out, never past
    // where the key starts.
    const keyEnd = CLEAN.length + KEY.length;
    expect(sent).toBe(CLEAN.slice(0, Math.ceil(keyEnd / size) * size - 64));
    expect(sent).not.toContain("ghp_");
  });

  it("a key at the very end: the last 64 characters before its end are not sent", () => {
    const { sent, err } = stream(chunksOf(CLEAN + KEY, 7));
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    expect(sent).toBe(CLEAN.slice(0, CLEAN.length + KEY.length - 64));
  });

  it("redactions and flags still apply to the text before the key", () => {
    const { sent, err, run } = stream(["See PROJ-1234 with Globex: " + KEY + PAST_WINDOW]);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    expect(sent).toBe("See [REDACTED:PROJECT_NAMES] with Globex: ");
    expect(run.ctx.guardrail!.actions).toEqual(["flag:competitors", "redact:project-names", "block:no-secrets"]);
  });

  it("a match that runs into the key is not sent in part: the text stops where it starts", () => {
    // A redaction whose match ("token ghp_…") runs into the key would send part of the blocked text, masked: the
    // release stops where that match starts.
    const rules = { ...RULES, rules: [...RULES.rules, { name: "tokens", patterns: ["token ghp_\\w+"], on: ["output" as const], action: "redact" as const, redact_with: "mask" as const }] };
    const { sent } = stream([ANSWER + PAST_WINDOW], rules);
    expect(sent).toBe(CLEAN.slice(0, CLEAN.indexOf("token ")));
  });

  it("streamed JSON: the arguments before the key, as they came", () => {
    const args = '{"q":"\\u0041AAA and then ' + KEY + PAST_WINDOW + '"}';
    const { sent, err } = stream(chunksOf(args, 200), RULES, true);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    expect(sent).toBe('{"q":"\\u0041AAA and then ');
  });

  // A security review's cases: another rule's match that has begun but not ended when the key completes is no hit
  // yet, so the text still inside the window must stay unsent (a regex cannot tell whether the match would complete).
  describe("another rule's match still open when the key completes", () => {
    const CONFIDENTIAL = { name: "confidential", patterns: ["BEGIN CONFIDENTIAL[\\s\\S]*?END CONFIDENTIAL"], on: ["output" as const], action: "block" as const };
    const INVOICE = "Here is the invoice. BEGIN CONFIDENTIAL salary of CEO is 990k " + KEY + " END CONFIDENTIAL refund";
    const PRIVATE = { name: "private", patterns: ["<private>[\\s\\S]*?</private>"], on: ["output" as const], action: "redact" as const, redact_with: "mask" as const };
    const ADDRESS = "ok <private>home addr 12 Elm St " + KEY + "</private> end";

    it("block rule, in chunks of 4: only what had cleared the window, none of the confidential text", () => {
      const { sent, err } = stream(chunksOf(INVOICE, 4), { ...RULES, rules: [...RULES.rules, CONFIDENTIAL] });
      expect(err?.details).toMatchObject({ rule: "no-secrets", on: "output" });
      expect(sent).toBe("Here is the invoice. BEGIN CONFIDENTIAL ");
      expect(sent).not.toContain("salary");
    });

    it("block rule, in one write: the text before the confidential part", () => {
      const { sent, err } = stream([INVOICE], { ...RULES, rules: [...RULES.rules, CONFIDENTIAL] });
      expect(err?.code).toBe("GUARDRAIL_BLOCKED");
      expect(sent).toBe("Here is the invoice. ");
    });

    it("redact rule, in chunks of 4: the private text is not sent unmasked", () => {
      const { sent, err } = stream(chunksOf(ADDRESS, 4), { rules: [RULES.rules[0], PRIVATE], stream_window: 64 });
      expect(err?.code).toBe("GUARDRAIL_BLOCKED");
      expect(sent).toBe("ok <priv");
      expect(sent).not.toContain("home addr");
    });

    it("redact rule, in one write: the text before the private part", () => {
      const { sent, err } = stream([ADDRESS], { rules: [RULES.rules[0], PRIVATE], stream_window: 64 });
      expect(err?.code).toBe("GUARDRAIL_BLOCKED");
      expect(sent).toBe("ok ");
    });
  });
});
