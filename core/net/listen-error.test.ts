import { describe, expect, it } from "vitest";
import { cannotListen } from "./listen-error.ts";

const errno = (code: string) => Object.assign(new Error(`listen ${code}`), { code });

describe("cannotListen", () => {
  it("says why in one line naming host:port and the setting to change", () => {
    expect(cannotListen(errno("EACCES"), "0.0.0.0", 80)?.message)
      .toBe("cannot listen on 0.0.0.0:80 (ports below 1024 need root or CAP_NET_BIND_SERVICE: set a higher --port or server.port; EACCES)");
    expect(cannotListen(errno("EACCES"), "127.0.0.1", 443, "metrics")?.message)
      .toBe("cannot listen for metrics on 127.0.0.1:443 (ports below 1024 need root or CAP_NET_BIND_SERVICE: set a higher --metrics-port or metrics.port; EACCES)");
    expect(cannotListen(errno("EINVAL"), "fe80::1", 8787)?.message)
      .toBe("cannot listen on [fe80::1]:8787 (fe80::1 is not a valid address to listen on: check --host or server.host; EINVAL)");
    expect(cannotListen(errno("EAI_AGAIN"), "gw.example", 8787)?.message).toMatch(/^cannot listen on gw\.example:8787 \(looking up gw\.example failed/);
  });

  it("leaves other errors (a busy port, EMFILE) to the caller", () => {
    expect(cannotListen(errno("EADDRINUSE"), "127.0.0.1", 8787)).toBeUndefined();
    expect(cannotListen(errno("EMFILE"), "127.0.0.1", 8787)).toBeUndefined();
    expect(cannotListen(new Error("no code"), "127.0.0.1", 8787)).toBeUndefined();
  });
});
