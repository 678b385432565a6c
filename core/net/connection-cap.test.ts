import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultMaxConnections, MAX_CONNECTIONS_DEFAULT, openFileLimit } from "./connection-cap.ts";

describe("the default connection cap", () => {
  it.runIf(process.platform === "linux")("leaves room under the open-file limit for an upstream connection per client connection", () => {
    const limit = Number(/^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))![1]);
    expect(openFileLimit()).toBe(limit);
    const cap = defaultMaxConnections();
    expect(cap * 2 + 64).toBeLessThanOrEqual(limit);
    expect(cap).toBe(Math.min(MAX_CONNECTIONS_DEFAULT, Math.floor((limit - 64) / 2)));
  });

  it("is never above the 16 384 one process is sized for", () => {
    expect(defaultMaxConnections()).toBeLessThanOrEqual(MAX_CONNECTIONS_DEFAULT);
    expect(defaultMaxConnections()).toBeGreaterThan(0);
  });
});
