import { describe, expect, it } from "vitest";
import type { IncomingMessage } from "node:http";
import { checkConsole, consoleSettings, isLoopback, servedHere } from "./settings.ts";
import type { ConfigProblem } from "../config/source.ts";

const at = (path: (string | number)[], message: string): ConfigProblem => ({ file: "gateway.yaml", line: 1, column: 1, message: `${path.join(".")}: ${message}` });
const on = (localAddress: string) => ({ socket: { localAddress } }) as unknown as IncomingMessage;

describe("console settings", () => {
  it("defaults: auto, at /console", () => {
    expect(consoleSettings({})).toEqual({ enabled: "auto", path: "/console" });
  });

  it("auto serves connections made to a loopback address only; true everywhere; false nowhere", () => {
    for (const a of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) expect(isLoopback(a), a).toBe(true);
    for (const a of ["10.0.0.5", "192.168.1.2", "::ffff:10.0.0.1", "fe80::1", "1127.0.0.1", "", undefined]) expect(isLoopback(a), String(a)).toBe(false);
    expect(servedHere({ enabled: "auto", path: "/console" }, on("127.0.0.1"))).toBe(true);
    expect(servedHere({ enabled: "auto", path: "/console" }, on("10.1.2.3"))).toBe(false);
    expect(servedHere({ enabled: true, path: "/console" }, on("10.1.2.3"))).toBe(true);
    expect(servedHere({ enabled: false, path: "/console" }, on("127.0.0.1"))).toBe(false);
  });

  it("refuses a path the gateway answers itself", () => {
    for (const path of ["/api", "/api/console", "/admin/ui", "/metrics", "/healthz"]) {
      const problems: ConfigProblem[] = [];
      checkConsole({ console: { path } }, at, problems);
      expect(problems.map((p) => p.message), path).toEqual([expect.stringMatching(/^console\.path: console\.path .* is under \//)]);
    }
    const ok: ConfigProblem[] = [];
    checkConsole({ console: { path: "/ops/console" } }, at, ok);
    checkConsole({ console: { path: "/apis" } }, at, ok);
    expect(ok).toEqual([]);
  });
});
