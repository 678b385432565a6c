// An image request whose upstream never answers within the hold (300 s as shipped; here the model's
// limits.timeout_seconds, 0.5 s) was answered 504 UPSTREAM_TIMEOUT but left no ledger record: the hold's abort was
// taken for a client that left, the attempt logged as 499 CANCELLED and only after the record had been written
// without it. The attempt is now the timeout it is: one record under the request's generation id (504, outcome
// error, cost 0, its attempt 504 UPSTREAM_TIMEOUT), the access line saying the same and the upstream metric counting
// a failed attempt, not a cancelled one. On the shipped gateway.yaml and catalog (openai/gpt-image-1 on openai).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { ledgerRecordOf, postJson } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { providerEnv, SHIPPED_KEY, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAIMedia, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import type { RunningGateway } from "../core/server.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
let openai: FakeOpenAIMedia;
let anthropic: FakeAnthropic;
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

beforeAll(async () => {
  openai = await startFakeOpenAIMedia();
  anthropic = await startFakeAnthropic();
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  // The catalog's own entry (as shippedConfig gives it, any retirement left out), its hold shortened so the test does
  // not wait 300 s.
  const shipped = config.models?.["openai/gpt-image-1"] ?? YAML.parse(readFileSync(join(root, "catalog", "models.yaml"), "utf8")).models["openai/gpt-image-1"];
  config.models = { ...config.models, "openai/gpt-image-1": { ...shipped, limits: { ...shipped.limits, timeout_seconds: 0.5 } } };
  ({ gw, log, baseURL } = await startLoggedGateway(config, providerEnv(config)));
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});

/** gateway_upstream_duration_seconds' count for openai/gpt-image-1 attempts with this outcome. */
const attemptsCounted = async (outcome: string) =>
  (await gw.gateway.metrics.registry.getSingleMetric("gateway_upstream_duration_seconds")!.get()).values
    .find((v) => (v as { metricName?: string }).metricName === "gateway_upstream_duration_seconds_count"
      && v.labels.provider === "openai" && v.labels.model === "openai/gpt-image-1" && v.labels.outcome === outcome)?.value ?? 0;

describe("an image request past its hold", () => {
  it("is answered 504 and recorded as the timeout it is: ledger, access log and metrics", async () => {
    const [errorsBefore, cancelledBefore] = [await attemptsCounted("error"), await attemptsCounted("cancelled")];
    openai.failures.push("hang", "hang", "hang");
    const r = await postJson(`${baseURL}/images/generations`, { model: "openai/gpt-image-1", prompt: "a lighthouse" }, { authorization: `Bearer ${SHIPPED_KEY}` });
    expect(r.status, r.text).toBe(504);
    expect(r.json.error).toMatchObject({ code: "UPSTREAM_TIMEOUT", message: "Image generation on openai/gpt-image-1 did not finish within 0.5 s" });
    const generationId = r.headers.get("x-mg-generation-id");
    expect(generationId).toBeTruthy();

    const record = await ledgerRecordOf(gw as never, r.headers.get("x-request-id"));
    expect(record).toMatchObject({
      generationId, endpoint: "images", model: "openai/gpt-image-1", provider: "openai", status: 504, outcome: "error",
      costPico: 0n, images: 0, attempts: 1,
      attemptList: [{ model: "openai/gpt-image-1", provider: "openai", status: 504, error: "UPSTREAM_TIMEOUT" }],
    });
    const [line] = await log.accessOnce((l) => l.requestId === r.headers.get("x-request-id"), 1);
    expect(line).toMatchObject({
      status: 504, errorCode: "UPSTREAM_TIMEOUT", outcome: "error", aborted: false,
      attempts: [{ provider: "openai", model: "openai/gpt-image-1", status: 504, errorCode: "UPSTREAM_TIMEOUT" }],
    });
    expect(await attemptsCounted("error")).toBe(errorsBefore + 1);
    expect(await attemptsCounted("cancelled")).toBe(cancelledBefore);
  });
});
