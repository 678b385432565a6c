import { describe, expect, it } from "vitest";
import { heapSummary } from "./slow-streams.ts";

describe("heapSummary", () => {
  it("reads the heap's committed and used sizes from prom-client's default metrics", () => {
    const metrics = [
      "# HELP nodejs_heap_size_total_bytes Process heap size from Node.js in bytes.",
      "nodejs_heap_size_total_bytes 121323520",
      "nodejs_heap_size_used_bytes 88238776",
      'nodejs_heap_space_size_total_bytes{space="new"} 33554432',
      'nodejs_heap_space_size_total_bytes{space="old"} 79921152',
      'nodejs_heap_space_size_used_bytes{space="new"} 2653792',
      'nodejs_heap_space_size_used_bytes{space="old"} 78023048',
      'nodejs_heap_space_size_used_bytes{space="new_large_object"} 0',
    ].join("\n");
    expect(heapSummary(metrics)).toBe("committed 115.7 MB (young 32.0, old 76.2), in use 84.2 MB (young 2.5, old 74.4)");
  });

  it("marks what the metrics lack", () => {
    expect(heapSummary("nodejs_heap_size_total_bytes 1048576\n")).toBe("committed 1.0 MB (young ?, old ?), in use ? MB (young ?, old ?)");
  });
});
