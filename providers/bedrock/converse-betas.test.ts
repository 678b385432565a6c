// A Converse call to Claude: Bedrock reads betas from additionalModelRequestFields.anthropic_beta, never from a header,
// so the provider's configured anthropic-beta is sent there (and not as a header), as InvokeModel puts it in its body.
import { afterAll, describe, expect, it } from "vitest";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { Target } from "../../core/contracts/provider.ts";
import { createBedrockDriver } from "./index.ts";

const received: { headers: IncomingHttpHeaders; body: any }[] = [];
const server = createServer((req, res) => {
  let raw = "";
  req.on("data", (c) => (raw += c));
  req.on("end", () => {
    received.push({ headers: req.headers, body: JSON.parse(raw) });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ output: { message: { role: "assistant", content: [{ text: "ok" }] } }, stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } }));
  });
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const config = (headers: Record<string, string>) => ({
  protocol: "bedrock", bedrock_claude_api: "converse", region: "us-east-1", aws_access_key_id: "AKIAFAKE", aws_secret_access_key: "x",
  base_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, headers,
}) as ProviderConfig;
const target = (upstreamModel: string) => ({ modelId: "m", provider: "aws", upstreamModel, pricing: {}, timeoutMs: 5000 }) as Target;
const call = { signal: new AbortController().signal, requestId: "r1", clientHeaders: {}, reportUsage() {}, reportFirstToken() {}, reportFirstEvent() {} } as any;

async function sent(headers: Record<string, string>, model: string, body: Record<string, unknown>) {
  const driver = createBedrockDriver("aws", config(headers), { timeoutMs: 5000 }, {});
  try {
    await driver.converse!({ messages: [{ role: "user", content: [{ text: "hi" }] }], ...body }, target(model), call);
    return received.at(-1)!;
  } finally {
    await driver.close?.();
  }
}

const CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

describe("Converse: the provider's configured anthropic-beta", () => {
  it("goes in additionalModelRequestFields.anthropic_beta (beside thinking), only betas Bedrock accepts, each once; no beta header", async () => {
    const r = await sent({ "Anthropic-Beta": "context-1m-2025-08-07, files-api-2025-04-14,context-1m-2025-08-07", "x-extra": "1" }, CLAUDE,
      { additionalModelRequestFields: { thinking: { type: "enabled", budget_tokens: 2048 }, anthropic_beta: ["interleaved-thinking-2025-05-14"] } });
    expect(r.body.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 2048 }, anthropic_beta: ["interleaved-thinking-2025-05-14", "context-1m-2025-08-07"] });
    expect(r.headers["anthropic-beta"]).toBeUndefined();
    expect(r.headers["x-extra"]).toBe("1");
    expect((await sent({ "anthropic-beta": "context-1m-2025-08-07" }, CLAUDE, {})).body.additionalModelRequestFields).toEqual({ anthropic_beta: ["context-1m-2025-08-07"] });
  });

  it("a model that is not Claude gets no Claude field; betas Bedrock refuses alone add none", async () => {
    const llama = await sent({ "anthropic-beta": "context-1m-2025-08-07" }, "us.meta.llama3-3-70b-instruct-v1:0", {});
    expect(llama.body.additionalModelRequestFields).toBeUndefined();
    expect(llama.headers["anthropic-beta"]).toBeUndefined();
    expect((await sent({ "anthropic-beta": "files-api-2025-04-14" }, CLAUDE, {})).body.additionalModelRequestFields).toBeUndefined();
  });
});
