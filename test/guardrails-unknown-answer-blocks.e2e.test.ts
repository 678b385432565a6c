// Answer content blocks of types the gateway does not know (the context-management beta's compaction, a made-up
// type) reach the Messages client as Claude sent them, so the output rules read them as they read text blocks, end to
// end on the shipped shape, JSON and streamed (a compaction's summary streams in one compaction_delta, another type
// whole in its content_block_start): a blocked keyword anywhere in one stops the answer, an email is masked in the
// field it is in, and what no rule matches (the compaction's opaque encrypted_content) comes through as it was.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { ask } from "./helpers/protocol-clients.ts";
import { startFakeAnthropic, type Block, type FakeAnthropic } from "./upstreams/anthropic.ts";

const KEY = testKey("unknownanswer");
const MODEL = "anthropic/claude-sonnet-4.5";
const EMAIL = "bob@example.com";
const OPAQUE = "RW5jcnlwdGVkU3VtbWFyeQ==";

/** The block Claude starts its answer with, holding `text`, by the kind the user asks for. */
const BLOCKS: Record<string, (text: string) => Block> = {
  compaction: (text) => ({ type: "compaction", content: `Summary so far: ${text}`, encrypted_content: OPAQUE }),
  "made-up": (text) => ({ type: "advisor_note", id: "adv_1", note: { lines: ["Earlier:", text] } }),
};
/** The answer text of each block kind: where `text` lands in the client's answer. */
const textOf: Record<string, (b: any) => string> = {
  compaction: (b) => b.content,
  "made-up": (b) => b.note.lines[1],
};

let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startFakeAnthropic();
  // "<kind>: <text>" in the user turn: Claude answers a <kind> block holding <text>, then its usual text block.
  anthropic.leadingBlocksFor = (body) => {
    const m = /^(compaction|made-up): (.*)$/.exec(body.messages.at(-1).content[0].text);
    return m ? [BLOCKS[m[1]!]!(m[2]!)] : undefined;
  };
  const config = shippedConfig({ openai: "http://127.0.0.1:9", anthropic: anthropic.baseUrl }); // only Claude is asked
  config.projects.unknownanswer = {
    keys: [keyEntry("u", KEY)],
    allow_models: [MODEL],
    budget: { usd: "100", period: "month" },
    guardrails: {
      rules: [
        { name: "no-launch", keywords: ["falconlaunch"], on: ["output"], action: "block" },
        { name: "pii", detect: ["email"], on: ["output"], action: "redact" },
      ],
    },
  };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
});

/** The client's answer blocks: the JSON content, or the stream's blocks put together as the SDK does. */
function blocksOf(r: Awaited<ReturnType<typeof ask>>): any[] {
  if (r.json) return r.json.content;
  const blocks: any[] = [];
  for (const ev of r.events) {
    const d = JSON.parse(ev.data);
    if (ev.event === "content_block_start") blocks[d.index] = d.content_block;
    else if (ev.event === "content_block_delta" && d.delta.type === "compaction_delta") Object.assign(blocks[d.index], { content: d.delta.content, encrypted_content: d.delta.encrypted_content });
  }
  return blocks;
}

describe.each([false, true])("stream: %s", (stream) => {
  describe.each(Object.keys(BLOCKS))("a %s block in the answer", (kind) => {
    it("holding a blocked keyword stops the answer before the client sees it", async () => {
      const r = await ask(gw.url, KEY, "messages", MODEL, `${kind}: the falconlaunch date is set`, stream);
      expect(r.errorCode, r.raw).toBe("GUARDRAIL_BLOCKED");
      expect(r.rule).toBe("no-launch");
      expect(r.raw).not.toContain("falconlaunch");
      // JSON: a 400; streamed: the stream had started (200) and ends with Messages' error event.
      expect(r.status).toBe(stream ? 200 : 400);
    });

    it("holding an email comes back with it masked in place", async () => {
      const r = await ask(gw.url, KEY, "messages", MODEL, `${kind}: write to ${EMAIL}`, stream);
      expect(r.status, r.raw).toBe(200);
      expect(r.raw).not.toContain(EMAIL);
      const block = blocksOf(r)[0];
      expect(textOf[kind]!(block)).toMatch(/write to \[REDACTED:EMAIL\]$/);
      if (kind === "compaction") expect(block.encrypted_content).toBe(OPAQUE);
      expect(r.text).toBe("Hello from the fake Anthropic upstream.");
    });
  });
});
