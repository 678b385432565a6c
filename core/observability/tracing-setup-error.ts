// The OTLP exporter refused its settings as tracing was set up (a URL it cannot parse, from an OTEL_EXPORTER_OTLP_*
// variable no config check reads): `start` refuses with this one line naming the setting (exit 1), not the
// exporter's stack.
export class TracingSetupError extends Error {
  constructor(readonly setting: string, cause: unknown) {
    // The exporter's message quotes the URL: a user and password in it are a credential (docs/security.md).
    const why = String((cause as Error)?.message ?? cause).replace(/\/\/[^/@\s']*@/g, "//");
    super(`tracing cannot be set up from ${setting} (an absolute http(s) URL is needed): ${why}`, { cause });
    this.name = "TracingSetupError";
  }
}
