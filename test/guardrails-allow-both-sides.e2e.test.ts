// An allow rule on both sides (`on: [input, output]`) is one topic check per request: the user's turn about the topic
// satisfies it for the answer too (an answer need not repeat "invoice" to pass), on every client protocol, JSON and
// streamed, and the stored Responses record is judged the same way (kept, not refused). A request off the topic is
// still refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startTestGateway } from "./helpers/gateway.ts";
import { KEY, policyConfig } from "./helpers/policy-config.ts";
import { ask, PROTOCOLS } from "./helpers/protocol-clients.ts";
import type { RunningGateway } from "../core/server.ts";

const MODEL = "openai/gpt-4o-mini";
const GUARDRAILS = { rules: [{ name: "billing-only", type: "allow", keywords: ["invoice", "refund"], on: ["input", "output"], action: "block" }] };

let fake: FakeOpenAI;
let gw: RunningGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.piecesFor = () => ["Sure, ", "it is on its way."]; // no billing word in the answer
  gw = await startTestGateway(policyConfig(fake.baseUrl, { acme: { guardrails: GUARDRAILS } }));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe.each(PROTOCOLS)("an allow rule on input and output, on %s", (protocol) => {
  describe.each([false, true])("stream: %s", (stream) => {
    it("passes the answer when the user's turn was about the topic", async () => {
      const r = await ask(gw.url, KEY, protocol, MODEL, "Please resend my invoice", stream);
      expect(r.status, r.raw).toBe(200);
      expect(r.errorCode, r.raw).toBeUndefined();
      expect(r.text).toBe("Sure, it is on its way.");
    });

    it("refuses a turn off the topic", async () => {
      const r = await ask(gw.url, KEY, protocol, MODEL, "Tell me a joke", stream);
      expect(r.status).toBe(400);
      expect(r.rule).toBe("billing-only");
    });
  });
});

describe("the stored Responses record under an allow rule on both sides", () => {
  it("is kept when the user's turn satisfied the rule, so GET and previous_response_id find it", async () => {
    const res = await fetch(`${gw.url}/api/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: "Please resend my invoice" }),
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.store).not.toBe(false);
    const got = await fetch(`${gw.url}/api/v1/responses/${body.id}`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(got.status).toBe(200);
  });
});
