import { describe, expect, it } from "vitest";
import { exposition, promRefs } from "./promql.ts";

describe("promRefs", () => {
  it("finds metrics, selector labels and grouping labels; skips functions, ranges, strings and numbers", () => {
    const r = promRefs('histogram_quantile(0.95, sum by (le, provider) (rate(gateway_upstream_duration_seconds_bucket{outcome="ok", model=~"a.*"}[$__rate_interval]))) / on (provider) group_left(model) up * 3600');
    expect(r.selectors).toEqual([
      { metric: "gateway_upstream_duration_seconds_bucket", labels: ["outcome", "model"] },
      { metric: "up", labels: [] },
    ]);
    expect(r.groupingLabels).toEqual(["le", "provider", "provider", "model"]);
  });
  it("a bare metric and a __name__ selector", () => {
    expect(promRefs("process_resident_memory_bytes").selectors).toEqual([{ metric: "process_resident_memory_bytes", labels: [] }]);
    expect(promRefs('{__name__="x_total", job="a"}').selectors).toEqual([{ metric: "x_total", labels: ["job"] }]);
  });
});

describe("exposition", () => {
  it("collects sample names and label names", () => {
    const m = exposition('# HELP a x\n# TYPE a counter\na_total{endpoint="chat",code="200"} 1\nb 2\n');
    expect([...m.keys()]).toEqual(["a_total", "b"]);
    expect([...m.get("a_total")!]).toEqual(["endpoint", "code"]);
  });
});
