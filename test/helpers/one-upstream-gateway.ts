// A gateway (memory store) in front of one fake OpenAI upstream, provider "up", serving model "t/m" to one key, with
// the routing settings a test is about: the set-up the retry and circuit-breaker tests share.
import { startFakeOpenAI, type FakeOpenAI } from "../upstreams/openai.ts";
import { keyEntry, startTestGateway, type TestGateway } from "./gateway.ts";

export interface OneUpstreamGateway {
  up: FakeOpenAI;
  gw: TestGateway;
  close(): Promise<void>;
}

export async function startOneUpstreamGateway(key: string, routing: Record<string, unknown>): Promise<OneUpstreamGateway> {
  const up = await startFakeOpenAI();
  const gw = await startTestGateway({
    store: { kind: "memory" },
    routing,
    providers: { up: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "t/m": { endpoints: [{ provider: "up", model: "m" }] } },
    projects: { p: { keys: [keyEntry("k", key)] } },
  });
  return { up, gw, close: async () => { await gw.close(); await up.close(); } };
}
