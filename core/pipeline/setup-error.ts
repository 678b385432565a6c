// A plugin's setup() threw while a config was being set up: that config cannot serve. `start` refuses it with this
// message (exit 1, no stack: the plugin's error, not the gateway's), a reload keeps the config it had.

/** prom-client's refusal of a second `new Counter(...)` of one name: what a setup that registers a metric hits at a reload. */
const ALREADY_REGISTERED = /A metric with the name (\S+) has already been registered/;

export class PluginSetupError extends Error {
  constructor(readonly plugin: string, cause: unknown) {
    const message = (cause as Error)?.message ?? String(cause);
    const again = ALREADY_REGISTERED.exec(message);
    const hint = again
      ? ` (setup runs again at every reload: get ${again[1]} with gateway.metrics.counter(), .gauge() or .histogram(), which return the one an earlier setup registered)`
      : "";
    super(`plugin ${plugin} setup failed: ${message}${hint}`, { cause });
    this.name = "PluginSetupError";
  }
}
