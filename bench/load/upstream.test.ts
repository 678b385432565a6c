// The load harness's lean upstream must speak the real wire format, or the gateway's figures mean nothing:
// the official openai client consumes it (streaming with usage, JSON, errors), directly and through the bare proxy.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import OpenAI from "openai";
import { createFakeUpstream, UPSTREAM_KEY } from "./upstream.ts";
import { createBareProxy } from "./bare-proxy.ts";

const listen = (s: Server) => new Promise<string>((r) => s.listen(0, "127.0.0.1", () => r(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)));

describe("bench/load fake upstream and bare proxy", () => {
  let upstream: Server;
  let flaky: Server;
  let proxy: ReturnType<typeof createBareProxy>;
  let upUrl: string;
  let flakyUrl: string;
  let proxyUrl: string;
  beforeAll(async () => {
    upstream = createFakeUpstream({ chunks: 5 });
    flaky = createFakeUpstream({ chunks: 5, failRate: 0.5 });
    upUrl = await listen(upstream);
    flakyUrl = await listen(flaky);
    proxy = createBareProxy(upUrl);
    proxyUrl = await listen(proxy.server);
  });
  afterAll(async () => {
    await proxy.close();
    upstream.close();
    flaky.close();
  });

  for (const via of ["direct", "bare proxy"] as const) {
    it(`streams chunks and usage the openai client accepts (${via})`, async () => {
      const client = new OpenAI({ apiKey: UPSTREAM_KEY, baseURL: `${via === "direct" ? upUrl : proxyUrl}/v1`, maxRetries: 0 });
      const stream = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } });
      let text = "";
      let usage;
      let chunks = 0;
      for await (const c of stream) {
        chunks++;
        text += c.choices[0]?.delta.content ?? "";
        usage = c.usage ?? usage;
      }
      expect(text).toBe("Token token1 token2 token3 token4");
      expect(chunks).toBe(1 + 5 + 1 + 1); // role, content, finish, usage
      expect(usage).toMatchObject({ completion_tokens: 5, total_tokens: 17 });
    });
  }

  it("answers JSON with usage, rejects a wrong key like OpenAI, and fails the requested fraction", async () => {
    const ok = new OpenAI({ apiKey: UPSTREAM_KEY, baseURL: `${upUrl}/v1`, maxRetries: 0 });
    const r = await ok.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(r.choices[0]!.message.content).toBe("Token token1 token2 token3 token4");
    expect(r.usage?.completion_tokens).toBe(5);
    const bad = new OpenAI({ apiKey: "sk-wrong", baseURL: `${upUrl}/v1`, maxRetries: 0 });
    await expect(bad.chat.completions.create({ model: "m", messages: [] })).rejects.toMatchObject({ status: 401, code: "invalid_api_key" });
    const f = new OpenAI({ apiKey: UPSTREAM_KEY, baseURL: `${flakyUrl}/v1`, maxRetries: 0 });
    const results = await Promise.allSettled([1, 2, 3, 4].map(() => f.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] })));
    expect(results.filter((x) => x.status === "rejected")).toHaveLength(2);
    expect((results.find((x) => x.status === "rejected") as PromiseRejectedResult).reason).toMatchObject({ status: 500, type: "server_error" });
  });
});
