// A plugin's setup() threw while a config was being set up: that config cannot serve. `start` refuses it with this
// message (exit 1, no stack: the plugin's error, not the gateway's), a reload keeps the config it had.
export class PluginSetupError extends Error {
  constructor(readonly plugin: string, cause: unknown) {
    super(`plugin ${plugin} setup failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "PluginSetupError";
  }
}
