// A closed gateway leaves no re-seed behind (core/metrics-seed.ts): the timer that moves a model's zeros at its
// `retires:` day held the gateway's metrics and whole config until then (up to 24.8 days; the shipped catalog has such
// a day), and then seeded the closed gateway's series. Date is moved by hand; the timer is a real one.
import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestGateway } from "./helpers/gateway.ts";

const DAY = Date.UTC(2030, 0, 1);

afterEach(() => vi.useRealTimers());

describe("Gateway.close() and the re-seed at a retires: day", () => {
  it("a gateway closed before the day does not move its zeros when the day comes", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: DAY - 1000 });
    const gw = await startTestGateway({
      store: { kind: "memory" },
      providers: {
        old: { protocol: "openai", base_url: "http://127.0.0.1:9", api_key: "sk-a" },
        next: { protocol: "openai", base_url: "http://127.0.0.1:9", api_key: "sk-b" },
      },
      models: { "t/moving": { endpoints: [{ provider: "old", model: "m", retires: "2030-01-01" }, { provider: "next", model: "m" }] } },
    });
    const { registry } = gw.gateway.metrics;
    expect(await registry.metrics()).toContain('model="t/moving",provider="old"');
    await gw.close();
    vi.setSystemTime(DAY + 1);
    await new Promise((r) => setTimeout(r, 1500)); // past the timer's second
    const text = await registry.metrics();
    expect(text).toContain('model="t/moving",provider="old"');
    expect(text).not.toContain('provider="next"');
  });
});
