// A 402 that only other requests' holds caused is not final (the audit: budget $0.0003, one request in flight held
// $0.000183, a second got "has reached its monthly budget ... spent $0", the openai SDK gave up, and the same request
// a second later succeeded). It says that requests in flight hold the rest and tells the SDKs to retry shortly
// (x-should-retry: true, Retry-After); a budget whose spend leaves too little for the request stays a final 402.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import OpenAI from "openai";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { KEY, auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";

describe("budget refusals caused by requests in flight", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ text: "one two three four five six seven eight nine ten" });
    // One request's worst case fits ($0.00021 at max_tokens 100), two do not.
    gw = await startTestGateway(policyConfig(fake.baseUrl, { acme: { budget: { usd: "0.0005", period: "month" } } }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  const url = () => `${gw.baseURL}/chat/completions`;
  const body = chat("openai/gpt-4o-mini", { max_tokens: 100 });
  /** A stream that holds its worst case for about `ms`, once the upstream has it (wrapped: awaiting it is its end). */
  async function inFlight(ms: number) {
    const before = fake.requests.length;
    fake.pace = (b) => (b.stream ? Math.ceil(ms / 12) : undefined);
    const a = postJson(url(), { ...body, stream: true }, auth());
    await vi.waitFor(() => expect(fake.requests.length).toBeGreaterThan(before), { timeout: 2_000, interval: 10 });
    return { a };
  }

  it("is a 402 that says requests in flight hold the rest, with x-should-retry: true and a short Retry-After", async () => {
    const { a } = await inFlight(1_000);
    const b = await postJson(url(), body, auth()).finally(() => a);
    expect(b.status).toBe(402);
    expect(b.json.error.code).toBe("BUDGET_EXCEEDED");
    expect(b.json.error.message).toMatch(/^Project "acme" has no room in its monthly budget of \$0\.0005 right now: requests in flight hold \$0\.000\d+ of it/);
    expect(b.json.error.message).not.toContain("has reached");
    expect(b.json.error.details).toMatchObject({ reason: "held_by_requests_in_flight", budget_usd: "0.0005" });
    expect(b.headers.get("x-should-retry")).toBe("true");
    expect(b.headers.get("retry-after")).toBe("1");
    expect(b.headers.get("retry-after-ms")).toBe("1000");
    expect((await a).status).toBe(200);
    expect((await postJson(url(), body, auth())).status).toBe(200); // the same request, once the first has settled
  });

  it("the openai SDK retries it and gets its answer once the request in flight has finished", async () => {
    const statuses: number[] = [];
    const client = new OpenAI({
      apiKey: KEY, baseURL: gw.baseURL, maxRetries: 2,
      fetch: async (input, init) => {
        const r = await fetch(input, init);
        statuses.push(r.status);
        return r;
      },
    });
    const { a } = await inFlight(600);
    const answer = await client.chat.completions.create({ model: body.model, messages: body.messages as never, max_tokens: 100 }).finally(() => a);
    expect(answer.choices[0]!.message.content).toBeTruthy();
    expect(statuses[0]).toBe(402);
    expect(statuses.at(-1)).toBe(200);
    expect((await a).status).toBe(200);
  });

  it("once the spend itself leaves too little for the request, the 402 is final: it says what is left and asks for no retry", async () => {
    let refused: Awaited<ReturnType<typeof postJson>> | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const r = await postJson(url(), body, auth());
      if (r.status !== 200) refused = r;
    }
    expect(refused!.status).toBe(402);
    expect(refused!.json.error.message).toMatch(/^Project "acme" has \$0\.000\d+ left of its monthly budget of \$0\.0005 \(spent \$0\.000\d+\), less than this request may cost /);
    expect(refused!.json.error.details.reason).toBe("request_max_over_available");
    expect(refused!.headers.get("x-should-retry")).toBeNull();
    expect(refused!.headers.get("retry-after")).toBeNull();
  });
});
