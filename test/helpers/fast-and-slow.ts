// Two gateways on the shipped policy config, for a describe block: one in front of a fake OpenAI upstream that
// answers at once, one in front of a slow one (`words` words, one stream frame every `chunkDelayMs`). Started in
// beforeAll, closed in afterAll; read the fields inside tests.
import { afterAll, beforeAll } from "vitest";
import { startTestGateway, type TestGateway } from "./gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../upstreams/openai.ts";
import { policyConfig } from "./policy-config.ts";

export interface FastAndSlow { fake: FakeOpenAI; slow: FakeOpenAI; gw: TestGateway; slowGw: TestGateway }

export function fastAndSlowGateways(slowUpstream: { words: number; chunkDelayMs: number }): FastAndSlow {
  const s = {} as FastAndSlow;
  beforeAll(async () => {
    s.fake = await startFakeOpenAI();
    s.slow = await startFakeOpenAI({ text: Array.from({ length: slowUpstream.words }, (_, i) => `w${i}`).join(" "), chunkDelayMs: slowUpstream.chunkDelayMs });
    s.gw = await startTestGateway(policyConfig(s.fake.baseUrl));
    s.slowGw = await startTestGateway(policyConfig(s.slow.baseUrl));
  });
  afterAll(async () => {
    await s.gw?.close();
    await s.slowGw?.close();
    await s.fake?.close();
    await s.slow?.close();
  });
  return s;
}
