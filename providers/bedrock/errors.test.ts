import { describe, expect, it } from "vitest";
import { bedrockError, errorTypeOf, framingError, streamFrameError } from "./errors.ts";
import { EventStreamFrameTooLargeError, EventStreamFramingError } from "./eventstream.ts";
import { isRetryable } from "../../core/dispatch.ts";

const h = (type: string) => ({ "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });

describe("Bedrock HTTP errors", () => {
  it("the type comes from x-amzn-errortype or a __type field", () => {
    expect(errorTypeOf(h("ThrottlingException"), {})).toBe("ThrottlingException");
    expect(errorTypeOf({}, { __type: "com.amazon.bedrock#ValidationException" })).toBe("ValidationException");
    expect(errorTypeOf({}, { message: "x" })).toBeUndefined();
  });

  it("ValidationException 400 -> 400 INVALID_REQUEST with Bedrock's message, not retried", () => {
    const e = bedrockError("bedrock", 400, h("ValidationException"), '{"message":"The toolConfig field must be defined when using toolUse and toolResult content blocks."}');
    expect([e.status, e.code, e.retryable]).toEqual([400, "INVALID_REQUEST", false]);
    expect(e.message).toBe("Provider bedrock rejected the request (HTTP 400): ValidationException: The toolConfig field must be defined when using toolUse and toolResult content blocks.");
  });

  it.each([
    [429, "ThrottlingException", true], [429, "ModelNotReadyException", true], [503, "ServiceUnavailableException", true],
    [500, "InternalServerException", true], [403, "AccessDeniedException", false], [403, "InvalidSignatureException", false],
  ])("%i %s -> retryable %s", (status, type, retryable) => {
    const e = bedrockError("bedrock", status, h(type), '{"message":"m"}');
    expect(e.retryable).toBe(retryable);
    expect(e.code).toBe("UPSTREAM_ERROR");
    expect(e.message).toBe(`Provider bedrock returned HTTP ${status}: ${type}: m`);
    expect(e.details?.upstream_error_type).toBe(type);
  });

  it("Bedrock's x-amzn-requestid goes on in x-mg-upstream-request-id, retryable or not", () => {
    const id = { "x-amzn-requestid": "0b5c6e0e-1f2a-4b3c-9d8e-aws" };
    const throttled = bedrockError("bedrock", 429, { ...h("ThrottlingException"), ...id }, '{"message":"Too many requests"}');
    expect(throttled.headers).toEqual({ "x-mg-upstream-request-id": "0b5c6e0e-1f2a-4b3c-9d8e-aws" });
    const denied = bedrockError("bedrock", 403, { ...h("AccessDeniedException"), ...id }, '{"message":"m"}');
    expect(denied.headers).toEqual({ "x-should-retry": "false", "x-mg-upstream-request-id": "0b5c6e0e-1f2a-4b3c-9d8e-aws" });
  });

  it("424 ModelErrorException: the model failing is retried like a 5xx; passing on the model's own 4xx it is the client's 400", () => {
    const failed = bedrockError("bedrock", 424, h("ModelErrorException"), '{"message":"The model failed","originalStatusCode":500}');
    expect([failed.status, failed.code, isRetryable(failed)]).toEqual([502, "UPSTREAM_ERROR", true]);
    const refused = bedrockError("bedrock", 424, h("ModelErrorException"), '{"message":"Received client error (400) from primary with message \\"input malformed\\"","originalStatusCode":400}');
    expect([refused.status, refused.code, isRetryable(refused)]).toEqual([400, "INVALID_REQUEST", false]);
    expect(refused.message).toBe('Provider bedrock rejected the request (HTTP 424): ModelErrorException: Received client error (400) from primary with message "input malformed"');
    expect(refused.details).toMatchObject({ upstream_status: 424, upstream_error_type: "ModelErrorException" });
    // The model busy (429) or timing out (408) is not about the request: worth another try, as in a stream.
    for (const original of [429, 408]) {
      const busy = bedrockError("bedrock", 424, h("ModelErrorException"), `{"message":"Received client error (${original}) from primary","originalStatusCode":${original}}`);
      expect([busy.status, busy.code, isRetryable(busy)]).toEqual([502, "UPSTREAM_ERROR", true]);
    }
  });

  it("404 ResourceNotFoundException (the configured model id) -> 502 not retried (dispatch moves on to the next endpoint)", () => {
    const e = bedrockError("bedrock", 404, h("ResourceNotFoundException"), '{"message":"Model not found."}');
    expect([e.status, e.code]).toEqual([502, "UPSTREAM_ERROR"]);
    expect(e.details).toMatchObject({ reason: "upstream_not_found", upstream_status: 404 });
    expect(isRetryable(e)).toBe(false);
    expect(e.headers?.["x-should-retry"]).toBe("false");
  });
});

describe("exception frames", () => {
  it("modelStreamErrorException / throttlingException -> retryable upstream errors; validationException -> 400", () => {
    const m = streamFrameError("bedrock", { messageType: "exception", type: "modelStreamErrorException", payload: '{"message":"boom","originalStatusCode":500}' });
    expect([m.status, m.code, m.retryable, m.message]).toEqual([502, "UPSTREAM_ERROR", true, "Provider bedrock failed mid-stream: modelStreamErrorException: boom"]);
    expect(streamFrameError("bedrock", { messageType: "exception", type: "throttlingException", payload: '{"message":"slow down"}' }).retryable).toBe(true);
    const v = streamFrameError("bedrock", { messageType: "exception", type: "validationException", payload: '{"message":"bad"}' });
    expect([v.status, v.code]).toEqual([400, "INVALID_REQUEST"]);
    const err = streamFrameError("bedrock", { messageType: "error", type: "InternalFailure", payload: "", errorMessage: "oops" });
    expect(err.message).toBe("Provider bedrock failed mid-stream: InternalFailure: oops");
  });

  it("modelStreamErrorException passing on the model's own 4xx is the client's 400, as the HTTP ModelErrorException is: not retried", () => {
    const frame = (payload: object) => streamFrameError("bedrock", { messageType: "exception", type: "modelStreamErrorException", payload: JSON.stringify(payload) });
    const refused = frame({ message: 'Received client error (400) from primary with message "input malformed"', originalStatusCode: 400 });
    expect(refused).toMatchObject({
      status: 400, code: "INVALID_REQUEST", retryable: false, headers: { "x-should-retry": "false" },
      message: 'Provider bedrock rejected the request: modelStreamErrorException: Received client error (400) from primary with message "input malformed"',
      details: { provider: "bedrock", upstream_error_type: "modelStreamErrorException" },
    });
    expect(isRetryable(refused)).toBe(false);
    // The model failing, busy or timing out, or no status passed on: worth another try, as before.
    for (const original of [500, 503, 429, 408, undefined]) {
      const failed = frame({ message: "boom", originalStatusCode: original });
      expect([failed.status, failed.code, isRetryable(failed)]).toEqual([502, "UPSTREAM_ERROR", true]);
    }
  });
});

describe("event-stream framing failures", () => {
  it("a frame past the event bound is event_too_large: not retried, the client told not to, the bound and the setting named", () => {
    const e = framingError("bedrock", new EventStreamFrameTooLargeError(20 * 1024 * 1024, 16 * 1024 * 1024));
    expect(e).toMatchObject({
      status: 502, code: "UPSTREAM_ERROR", retryable: false, retryAfter: undefined, headers: { "x-should-retry": "false" },
      details: { provider: "bedrock", reason: "event_too_large", limit_chars: 16 * 1024 * 1024, frame_bytes: 20 * 1024 * 1024, setting: "server.upstream_limits.event_chars" },
    });
    expect(e.message).toBe("Provider bedrock sent an event-stream frame of 20971520 bytes, past the gateway's bound of 16777216 for one stream event (server.upstream_limits.event_chars raises it); the stream was stopped");
    expect(isRetryable(e)).toBe(false);
  });

  it("a corrupt frame (a checksum that fails, a length no bound admits) is still worth another try", () => {
    const e = framingError("bedrock", new EventStreamFramingError("event-stream frame prelude checksum mismatch"));
    expect(e).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, details: { provider: "bedrock", reason: "eventstream" } });
    expect(e.headers?.["x-should-retry"]).toBeUndefined();
    expect(isRetryable(e)).toBe(true);
  });
});

describe("a Bedrock context overflow", () => {
  it("is marked context_length_exceeded, sent as an HTTP ValidationException or in a stream", () => {
    const http = bedrockError("bedrock", 400, { "x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/" }, '{"message":"Input is too long for requested model."}');
    expect(http).toMatchObject({ status: 400, code: "INVALID_REQUEST", retryable: false, details: { reason: "context_length_exceeded" } });
    const frame = streamFrameError("bedrock", { messageType: "exception", type: "validationException", payload: '{"message":"The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum"}' });
    expect(frame).toMatchObject({ status: 400, code: "INVALID_REQUEST", retryable: false, details: { reason: "context_length_exceeded", input_tokens: 200049, context_window: 200000 } });
    const other = streamFrameError("bedrock", { messageType: "exception", type: "validationException", payload: '{"message":"Malformed input request"}' });
    expect(other.details?.reason).toBeUndefined();
  });
});
