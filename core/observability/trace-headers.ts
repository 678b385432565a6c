// The upstream client's side of tracing, without the OpenTelemetry packages: tracing.ts installs the injector while
// a tracer is alive, and the client calls withTraceHeaders on every request (one test when tracing is off).

type Injector = (headers: Record<string, string>, signal: AbortSignal) => Record<string, string>;
let injector: Injector | undefined;

/** Set by tracing.ts when its first tracer starts, cleared when its last one closes. */
export function setTraceInjector(fn: Injector | undefined): void {
  injector = fn;
}

/** Headers for an upstream request: the running attempt's traceparent added when tracing is on. */
export function withTraceHeaders(headers: Record<string, string>, signal: AbortSignal | undefined): Record<string, string> {
  return injector && signal ? injector(headers, signal) : headers;
}
