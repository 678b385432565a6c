// What the gathers of `start --workers N` cost, on a registry with LABEL_SETS label sets (endpoint x model x
// provider): a scrape of /metrics (each worker's registry as JSON, summed by the primary into Prometheus text) and the
// console's traffic gather, which every worker's sampler runs every 10 s (each worker's reading, added up by the
// asker). `npx tsx bench/cluster/gather-cost.ts [LABEL_SETS=500] [WORKERS=2]`
import { AggregatorRegistry } from "prom-client";
import { Metrics } from "../../core/metrics.ts";
import { TrafficSampler, wireReading } from "../../core/admin/traffic-sampler.ts";

const labelSets = Number(process.argv[2] ?? 500);
const workers = Number(process.argv[3] ?? 2);
const m = new Metrics();
for (let i = 0; i < labelSets; i++) {
  const labels = { endpoint: i % 3 ? "chat" : "messages", model: `m${i % 50}`, provider: `p${Math.floor(i / 50)}` };
  m.requests.add(1, labels.endpoint, labels.model, labels.provider, i % 7 ? "200" : "429");
  m.duration.observe(labels, 0.1);
  m.ttfb.observe(labels, 0.05);
  m.tokens.add(10, "input", labels.model, labels.provider);
}
const time = async (rounds: number, f: () => Promise<unknown>) => {
  for (let k = 0; k < 5; k++) await f();
  const t0 = performance.now();
  for (let k = 0; k < rounds; k++) await f();
  return (performance.now() - t0) / rounds;
};

const part = await m.registry.getMetricsAsJSON();
const partMs = await time(50, () => m.registry.getMetricsAsJSON());
let text = "";
const sumMs = await time(20, async () => (text = await AggregatorRegistry.aggregate(Array(workers).fill(part) as never).metrics()));
console.log(`scrape, ${labelSets} label sets, ${workers} workers: a worker's part ${partMs.toFixed(2)} ms; the primary's sum as text ${sumMs.toFixed(2)} ms (${(text.length / 1024).toFixed(0)} KB)`);

const reading = JSON.stringify(await wireReading(m));
const readingMs = await time(200, () => wireReading(m));
let now = 0;
const parts = () => Promise.resolve(JSON.parse(JSON.stringify(Array(workers).fill(JSON.parse(reading)))) as unknown[]);
const sampler = new TrafficSampler(m, () => (now += 10_000), () => parts);
const sampleMs = await time(200, () => sampler.sample());
console.log(`traffic gather: a worker's reading ${readingMs.toFixed(3)} ms (${reading.length} bytes); the sampler adding ${workers} up ${sampleMs.toFixed(3)} ms`);
