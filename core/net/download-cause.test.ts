import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.ts";
import { hiddenDownloadCause } from "./download-cause.ts";

const refused = (cause: unknown, reason = "unreachable") =>
  new GatewayError(400, "INVALID_REQUEST", "image_url could not be downloaded", { details: { field: "image_url", reason }, cause });

describe("the cause a client-URL refusal keeps from the client", () => {
  it("is the connection error with its code, and the socket error undici wrapped", () => {
    expect(hiddenDownloadCause(refused(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" })))).toBe("connect ECONNREFUSED 127.0.0.1:9");
    expect(hiddenDownloadCause(refused(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" })))).toBe("other side closed (UND_ERR_SOCKET)");
    expect(hiddenDownloadCause(refused(new TypeError("fetch failed", { cause: new Error("self-signed certificate") })))).toBe("fetch failed: self-signed certificate");
  });

  it("is nothing for a refusal the client is told in full, or with no cause", () => {
    expect(hiddenDownloadCause(refused(new Error("x"), "http_status"))).toBeUndefined();
    expect(hiddenDownloadCause(refused(undefined))).toBeUndefined();
    expect(hiddenDownloadCause(undefined)).toBeUndefined();
  });
});
