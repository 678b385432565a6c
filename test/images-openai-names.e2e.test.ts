// OpenAI SDK code on the shipped gateway.yaml and catalog asking openai/gpt-image-1 for `quality: "auto"` (gpt-image's
// documented default), `size: "auto"` or dall-e's `hd` / `standard` was refused with 400 "quality auto is not
// supported by openai/gpt-image-1: it serves medium, low, high". Each is now sent upstream as the catalog tier it
// stands for (auto: medium 1024x1024, the default; hd: high; standard: medium) and billed at that tier's price.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, SHIPPED_KEY, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAIMedia, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { toPico } from "../core/money/money.ts";

let openai: FakeOpenAIMedia;
let anthropic: FakeAnthropic;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  openai = await startFakeOpenAIMedia();
  anthropic = await startFakeAnthropic();
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  gw = await startTestGateway(config, { env: providerEnv(config) });
  client = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});

/** The catalog's price of one image at a tier plus its text input ($5/1M), in pico-dollars. */
const billed = (tierUsd: string, inputTokens: number) => toPico(tierUsd) + BigInt(inputTokens) * toPico("0.000005");

describe("openai/gpt-image-1 asked with OpenAI's other quality and size names", () => {
  const cases: [Record<string, string>, { quality: string; size: string }, string][] = [
    [{ quality: "auto", size: "auto" }, { quality: "medium", size: "1024x1024" }, "0.042"],
    [{ quality: "auto" }, { quality: "medium", size: "1024x1024" }, "0.042"],
    [{ quality: "hd", size: "1536x1024" }, { quality: "high", size: "1536x1024" }, "0.25"],
    [{ quality: "standard" }, { quality: "medium", size: "1024x1024" }, "0.042"],
  ];
  for (const [asked, sent, tierUsd] of cases) {
    it(`${JSON.stringify(asked)} is made and billed as ${sent.quality} ${sent.size} ($${tierUsd})`, async () => {
      const before = openai.requests.length;
      const { data, response } = await client.images.generate({ model: "openai/gpt-image-1", prompt: "a lighthouse", ...asked } as never).withResponse();
      expect(response.status).toBe(200);
      expect(data.data).toHaveLength(1);
      expect(openai.requests.slice(before).map((r) => r.body)).toEqual([expect.objectContaining({ model: "gpt-image-1", ...sent })]);
      const input = (data as unknown as { usage: { input_tokens: number } }).usage.input_tokens;
      const record = await ledgerRecordOf(gw, response.headers.get("x-request-id"));
      expect(record).toMatchObject({ status: 200, images: 1, costPico: billed(tierUsd, input) });
    });
  }

  it("a quality the model serves under no name is still refused before any upstream call", async () => {
    const before = openai.requests.length;
    const err = await client.images.generate({ model: "openai/gpt-image-1", prompt: "x", quality: "ultra" } as never).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ code: "BAD_REQUEST", details: { field: "quality", supported: ["medium", "low", "high"] } });
    expect(openai.requests.length).toBe(before);
  });
});
