import { describe, expect, it } from "vitest";
import { AnswerBound } from "../answer-bound.ts";
import { deltaChars, fieldChars, RelayedAnswer } from "./responses-answer-size.ts";

describe("deltaChars", () => {
  it("measures the delta string as sent, escapes included, wherever it lies in the event", () => {
    expect(deltaChars(JSON.stringify({ type: "response.output_text.delta", delta: "Hello", logprobs: [] }))).toBe(5);
    expect(deltaChars(JSON.stringify({ delta: 'say "hi"\\', item_id: "m" }))).toBe('say \\"hi\\"\\\\'.length);
    expect(deltaChars('{"type":"response.audio.delta", "delta" :  "QUJD"}')).toBe(4);
    expect(deltaChars(JSON.stringify({ delta: "" }))).toBe(0);
  });

  it("is 0 for an event without a string delta", () => {
    expect(deltaChars(JSON.stringify({ type: "response.output_text.delta" }))).toBe(0);
    expect(deltaChars(JSON.stringify({ type: "x", delta: 5 }))).toBe(0);
  });
});

describe("deltaChars after an offset", () => {
  it("finds the delta before the offset too (a key order other than OpenAI's)", () => {
    const data = JSON.stringify({ delta: "abc", type: "response.output_text.delta" });
    expect(deltaChars(data, 40)).toBe(3);
    expect(deltaChars(JSON.stringify({ type: "response.output_text.delta", delta: "abcd" }), 36)).toBe(4);
  });
});

describe("fieldChars", () => {
  it("measures a repeat event's text as sent under its key, nested in part too, escapes included", () => {
    expect(fieldChars(JSON.stringify({ type: "response.output_text.done", item_id: "m", text: 'say "hi"', logprobs: [] }), "text")).toBe('say \\"hi\\"'.length);
    expect(fieldChars(JSON.stringify({ type: "response.content_part.done", part: { type: "output_text", annotations: [], text: "abc" } }), "text")).toBe(3);
    expect(fieldChars(JSON.stringify({ type: "response.function_call_arguments.done", arguments: '{"text":"no"}' }), "arguments")).toBe(JSON.stringify('{"text":"no"}').length - 2);
    expect(fieldChars('{"type":"response.refusal.done", "refusal" : "nope"}', "refusal")).toBe(4);
  });

  it("is 0 without that key as a string; a key's name inside a string is not the key", () => {
    expect(fieldChars(JSON.stringify({ type: "response.output_text.annotation.added", annotation: { title: "t" } }), "text")).toBe(0);
    expect(fieldChars(JSON.stringify({ type: "response.function_call_arguments.done", arguments: '{"text":"no"}' }), "text")).toBe(0);
    expect(fieldChars(JSON.stringify({ type: "x", text: 5 }), "text")).toBe(0);
  });
});

describe("RelayedAnswer", () => {
  const LIMIT = 10_000;
  const event = (type: string, fields: Record<string, unknown>) => ({ type, data: JSON.stringify({ type, sequence_number: 1, ...fields }) });
  const added = (i: number) => event("response.output_item.added", { output_index: i, item: { id: `msg_${i}`, type: "message", status: "in_progress", role: "assistant", content: [] } });
  const delta = (i: number, text: string) => event("response.output_text.delta", { item_id: `msg_${i}`, output_index: i, content_index: 0, delta: text, logprobs: [], obfuscation: "abcdef" });
  const done = (i: number, text: string) => event("response.output_item.done", { output_index: i, item: { id: `msg_${i}`, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] } });

  /** Relays `events` until the bound refuses one: how many went through, and the refusal. */
  function relay(events: Iterable<{ type: string; data: string }>, max = 1_000_000) {
    const answer = new RelayedAnswer(new AnswerBound("up", LIMIT));
    let passed = 0, text = 0, wire = 0;
    for (const e of events) {
      try {
        answer.note(e.type, e.data);
      } catch (err) {
        return { passed, text, wire, err: err as any };
      }
      passed++;
      wire += e.data.length;
      if (e.type.endsWith(".delta")) text += JSON.parse(e.data).delta.length;
      if (passed > max) break;
    }
    return { passed, text, wire, err: undefined };
  }

  it("an answer just under the bound in small deltas (their events far larger than the bound) is relayed whole", () => {
    // Two items; each delta event is ~150 characters for 5 of text, so the events alone pass the bound 30 times over.
    const words = (n: number) => Array.from({ length: n }, () => " word");
    const first = words(900), second = words(900);
    const events = [added(0), ...first.map((w) => delta(0, w)), done(0, first.join("")), added(1), ...second.map((w) => delta(1, w)), done(1, second.join(""))];
    expect(events.filter((e) => e.type.endsWith(".delta")).reduce((n, e) => n + e.data.length, 0)).toBeGreaterThan(20 * LIMIT);
    expect(done(0, first.join("")).data.length + done(1, second.join("")).data.length).toBeLessThanOrEqual(LIMIT);
    const r = relay(events);
    expect(r.err).toBeUndefined();
    expect(r.passed).toBe(events.length);
  });

  /** A runaway item's events: added, then deltas of " word" without end. */
  function* runaway() {
    yield added(0);
    for (;;) yield delta(0, " word");
  }

  it("a runaway answer is cut after at most twice the bound's text, and at most twice the events a precise count lets through", () => {
    const r = relay(runaway());
    expect(r.err).toMatchObject({ details: { reason: "answer_too_large", limit_bytes: LIMIT } });
    expect(r.text).toBeGreaterThan(LIMIT - added(0).data.length - 5);
    expect(r.text).toBeLessThanOrEqual(2 * LIMIT);
    const precise = added(0).data.length + Math.ceil((LIMIT - added(0).data.length) / 5) * delta(0, " word").data.length;
    expect(r.wire).toBeLessThanOrEqual(2 * precise);
  });

  it("an item whose done is smaller than its deltas (a hostile upstream's) frees none of them: the stream is still cut", () => {
    function* hostile() {
      for (let i = 0; ; i++) {
        yield added(i);
        for (let k = 0; k < 5; k++) yield delta(i, "x".repeat(1000));
        yield done(i, "");
      }
    }
    const r = relay(hostile(), 100_000);
    expect(r.err).toMatchObject({ details: { reason: "answer_too_large" } });
    expect(r.text).toBeLessThanOrEqual(2 * LIMIT);
  });

  /** Events that repeat an answer's text when a part or item finishes: not deltas, not output items. */
  const repeats = (i: number, text: string) => [
    event("response.output_text.done", { item_id: `msg_${i}`, output_index: i, content_index: 0, text, logprobs: [] }),
    event("response.content_part.done", { item_id: `msg_${i}`, output_index: i, content_index: 0, part: { type: "output_text", text, annotations: [], logprobs: [] } }),
    event("response.function_call_arguments.done", { item_id: `fc_${i}`, output_index: i, arguments: text }),
    event("response.reasoning_summary_text.done", { item_id: `rs_${i}`, output_index: i, summary_index: 0, text }),
    event("response.reasoning_summary_part.done", { item_id: `rs_${i}`, output_index: i, summary_index: 0, part: { type: "summary_text", text } }),
    event("response.content_part.added", { item_id: `msg_${i}`, output_index: i, content_index: 0, part: { type: "output_text", text, annotations: [] } }),
  ];

  it("text repeated without end in events that are not deltas (output_text.done, content_part.done, *_arguments.done, reasoning *.done) is cut, after at most about twice the bound", () => {
    const text = "x".repeat(1000);
    for (const kind of repeats(0, text).map((e) => e.type)) {
      function* endless() {
        yield added(0);
        for (;;) yield* repeats(0, text).filter((e) => e.type === kind);
      }
      const r = relay(endless(), 10_000);
      expect(r.err, kind).toMatchObject({ details: { reason: "answer_too_large", limit_bytes: LIMIT } });
      // Each event counts all but 256 characters of it (its envelope aside).
      const size = repeats(0, text).find((e) => e.type === kind)!.data.length;
      expect(r.wire, kind).toBeLessThanOrEqual((2 * LIMIT * size) / (size - 256) + added(0).data.length);
      expect(r.wire, kind).toBeGreaterThan(LIMIT);
    }
  });

  it("repeat events without end whose text is empty but carry much else (logprobs) are cut too", () => {
    const logprobs = Array.from({ length: 50 }, (_, i) => ({ token: `t${i}`, logprob: -0.5, bytes: [116], top_logprobs: [] }));
    const e = event("response.output_text.done", { item_id: "msg_0", output_index: 0, content_index: 0, text: "", logprobs });
    function* endless() {
      yield added(0);
      for (;;) yield e;
    }
    const r = relay(endless(), 10_000);
    expect(r.err).toMatchObject({ details: { reason: "answer_too_large", limit_bytes: LIMIT } });
    expect(r.wire).toBeLessThanOrEqual((2 * LIMIT * e.data.length) / (e.data.length - 256) + added(0).data.length + e.data.length);
  });

  it("a summary in many short parts, each with its added and two done events, within the bound is relayed whole: they count by their text, not their envelopes", () => {
    const id = "rs_68c1" + "b".repeat(40);
    const events = [event("response.output_item.added", { output_index: 0, item: { id, type: "reasoning", summary: [] } })];
    const summary: { type: string; text: string }[] = [];
    for (let p = 0; p < 250; p++) {
      const text = `**Step ${p}** `.padEnd(20, "r");
      events.push(
        event("response.reasoning_summary_part.added", { item_id: id, output_index: 0, summary_index: p, part: { type: "summary_text", text: "" } }),
        event("response.reasoning_summary_text.delta", { item_id: id, output_index: 0, summary_index: p, delta: text, obfuscation: "abc" }),
        event("response.reasoning_summary_text.done", { item_id: id, output_index: 0, summary_index: p, text }),
        event("response.reasoning_summary_part.done", { item_id: id, output_index: 0, summary_index: p, part: { type: "summary_text", text } }),
      );
      summary.push({ type: "summary_text", text });
    }
    const itemDone = event("response.output_item.done", { output_index: 0, item: { id, type: "reasoning", summary } });
    events.push(itemDone);
    expect(itemDone.data.length).toBeLessThan(0.7 * 2 * LIMIT);
    const answer = new RelayedAnswer(new AnswerBound("up", 2 * LIMIT));
    for (const e of events) answer.note(e.type, e.data);
  });

  it("an answer near the bound with the events that repeat its text when each part finishes is relayed whole", () => {
    // A message whose text is most of the bound, in deltas, then its output_text.done, content_part.done and item done.
    const words = Array.from({ length: 1850 }, () => " word").join("");
    const events = [
      added(0), event("response.content_part.added", { item_id: "msg_0", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }),
      ...words.match(/.{1,25}/g)!.map((w) => delta(0, w)), ...repeats(0, words).slice(0, 2), done(0, words),
    ];
    expect(done(0, words).data.length).toBeLessThanOrEqual(LIMIT);
    expect(done(0, words).data.length).toBeGreaterThan(0.9 * LIMIT);
    const r = relay(events);
    expect(r.err).toBeUndefined();
    expect(r.passed).toBe(events.length);
  });
});
