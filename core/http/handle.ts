// One request through the gateway: context, body, pipeline, response, metrics, onFinish callbacks.
import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { generationId, requestId } from "./ids.ts";
import type { Gateway } from "../gateway.ts";
import type { EndpointSpec } from "../endpoints/spec.ts";
import type { GatewayContext, Outcome } from "../pipeline/context.ts";
import { clientClosed, toGatewayError, type GatewayError } from "../errors.ts";
import { readJsonBody } from "./body.ts";
import { bodyUnread, deferBody } from "./deferred-body.ts";
import { writeError, writeResponse } from "./respond.ts";
import { observe } from "../observability/index.ts";
import { wireBytes } from "../observability/wire-bytes.ts";
import { isShutdownError, shutdownCut } from "../shutdown.ts";
import { RequestAbort } from "../net/request-abort.ts";
import { warnDownloadCause } from "../net/download-cause.ts";
import { modelLabel, providerLabel, statusCode } from "./metric-labels.ts";
import { billedUsage } from "../observability/access-log.ts";
import { pluginRunning } from "../pipeline/compose.ts";
import { answerStatusFault } from "../pipeline/answer-status.ts";
import { isInternalFault, logRequestFailure } from "./failure-log.ts";

const REQUEST_ID = /^[\w.:\-/+=]{1,128}$/;

export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : requestId();
}

export async function handleRequest(
  gateway: Gateway, spec: EndpointSpec, req: IncomingMessage, res: ServerResponse, params: Record<string, string>,
): Promise<void> {
  const startedAt = performance.now();
  const snapshot = gateway.acquire();
  const controller = new RequestAbort();
  gateway.inflight.enter(controller); // a shutdown waits for it (and can cut it)
  /** The onFinish callbacks, each with the third-party plugin that registered it (named should it throw). */
  const finishers: Array<{ fn: (o: Outcome) => void | Promise<void>; plugin: string | undefined }> = [];
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
    wireBytes(req, res); // this response's bytes, taken as it ends (the access line reads them)
  });
  const ctx: GatewayContext = {
    requestId: requestIdOf(req),
    generationId: generationId(),
    endpoint: spec.kind,
    protocol: spec.protocol,
    method: req.method ?? "GET",
    path: req.url ?? "/",
    headers: req.headers,
    remoteAddress: req.socket.remoteAddress,
    startedAt,
    config: snapshot.config,
    drivers: snapshot.drivers,
    gateway,
    signal: controller.signal,
    body: undefined,
    params,
    targets: [],
    maxAttempts: 1,
    attempts: [],
    responseHeaders: {},
    onFinish: (fn) => { finishers.push({ fn, plugin: pluginRunning(ctx) }); },
  };
  controller.owner = () => ctx.auth?.projectId; // what is shared out per project (media-URL downloads) reads it
  const { metrics } = gateway;
  metrics.inFlight.enter(spec.kind);
  const observed = observe(gateway, ctx, req, res, spec); // access log line and trace; undefined when both are off
  let ttfb = 0;
  const hooks = { firstByte: () => { ttfb ||= performance.now() - startedAt; ctx.responseStarted = true; } };
  let outcome: Outcome | undefined;
  try {
    if (spec.method === "POST") {
      deferBody(ctx, () => {
        // The client that asked to be told before sending its body is told now, once auth has passed.
        if (req.headers.expect?.toLowerCase() === "100-continue") {
          res.removeHeader("connection"); // set on arrival (core/server.ts): now the body comes, the connection may be reused
          res.writeContinue();
        }
        return readJsonBody(req, snapshot.config.server.maxBodyBytes, spec.invalidCode ?? "INVALID_REQUEST");
      });
    }
    try {
      await snapshot.run(ctx);
    } finally {
      // Answered without its body (401, ...): what is still on its way is not read, so the connection cannot be reused.
      if (!req.complete && bodyUnread(ctx)) ctx.responseHeaders.connection = "close";
    }
    if (!ctx.response) throw new Error(`no response produced for ${spec.kind}`);
    const unsendable = answerStatusFault(ctx); // a plugin's answer with a status Node refuses: the error envelope instead
    if (unsendable) throw unsendable;
    try {
      outcome = await writeResponse(ctx, res, hooks);
    } catch (e) {
      outcome = fail(toGatewayError(e, controller.signal), true);
    }
  } catch (e) {
    outcome = fail(toGatewayError(e, controller.signal));
  } finally {
    // Whatever threw above, the request is let go: a leaked in-flight slot held every later shutdown for its grace.
    await settle(outcome ?? { status: 500, error: toGatewayError(new Error("request failed while answering"), controller.signal), aborted: false });
  }

  /** `whileWriting`: the failure came out of writing the answer (its stream, read before the first byte). */
  function fail(err: GatewayError, whileWriting = false): Outcome {
    // Cut by shutdown: the client gets the 503, not the abort's 499. A client that left makes the work under it fail
    // with a plain error (toGatewayError made that its 499 once the signal had fired; a socket gone before: here), not
    // a 500 INTERNAL of the gateway's in the log and the metrics.
    // A shutdown's 503 is the gateway stopping, neither a fault (no error line: the drain logs what it cut) nor a
    // client that left (not aborted: the ledger records an error).
    const clientLeft = res.destroyed && !res.writableFinished;
    const cut = shutdownCut(controller.signal) ?? (isShutdownError(err) ? err : undefined);
    err = cut ?? (clientLeft && err.code === "INTERNAL" ? clientClosed(err.cause) : err);
    if (!cut && isInternalFault(err)) logRequestFailure(ctx, err, whileWriting);
    warnDownloadCause(gateway.log, err, { requestId: ctx.requestId, project: ctx.auth?.projectId });
    // The status the client was sent (a Gemini client's 400 for a non-retryable 502): what the log and metrics count.
    const status = writeError(ctx, res, err, hooks);
    return { status, error: err, aborted: controller.signal.aborted && !cut };
  }

  /** Metrics, the finishers (the ledger write), the access line; each step runs even if one before it throws. */
  async function settle(outcome: Outcome): Promise<void> {
    const step = (what: string, fn: () => void) => {
      try {
        fn();
      } catch (err) {
        gateway.log.error(`${what} failed`, { requestId: ctx.requestId, error: String(err) });
      }
    };
    let model = "", provider = "";
    const total = (performance.now() - startedAt) / 1000;
    try {
      step("request metrics", () => {
        model = modelLabel(ctx);
        provider = providerLabel(ctx, outcome.error);
        const labels = { endpoint: spec.kind, model, provider };
        metrics.requests.add(1, spec.kind, model, provider, String(statusCode(outcome)));
        metrics.duration.observe(labels, total);
        if (ttfb) metrics.ttfb.observe(labels, ttfb / 1000);
      });
      step("in-flight gauge", () => metrics.inFlight.leave(spec.kind));
      // The answer is written: what the request held for its life (media-URL bytes in flight) is let go before the
      // finishers, so one that never settles (a plugin's, a stuck ledger) does not hold its project's share.
      step("request end", () => controller.end());
      for (const { fn, plugin } of finishers) {
        try {
          await fn(outcome);
        } catch (err) {
          gateway.log.error("onFinish callback failed", {
            requestId: ctx.requestId, error: String(err), ...(plugin === undefined ? {} : { plugin }),
            ...(err instanceof Error && err.stack ? { stack: err.stack } : {}),
          });
        }
      }
      // After the finishers: the tokens billed (the ledger's, the access line's), estimated for a stream cut short.
      // Sandbox traffic is not billed and the ledger's usage leaves it out: so does this series.
      step("token metrics", () => {
        const u = ctx.model && !ctx.auth?.sandbox ? billedUsage(ctx, outcome) : undefined;
        if (!u) return;
        if (u.inputTokens) metrics.tokens.add(u.inputTokens, "input", model, provider);
        if (u.outputTokens) metrics.tokens.add(u.outputTokens, "output", model, provider);
        if (u.cacheReadTokens) metrics.tokens.add(u.cacheReadTokens, "cache_read", model, provider);
        if (u.cacheWriteTokens) metrics.tokens.add(u.cacheWriteTokens, "cache_write", model, provider);
      });
      step("access line", () => observed?.finish(outcome, ttfb, total * 1000));
    } finally {
      gateway.release(snapshot);
      gateway.inflight.leave(controller);
      controller.end(); // a no-op once ended above: kept so every path lets go
    }
  }
}
