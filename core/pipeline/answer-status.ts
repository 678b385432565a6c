// A plugin may answer itself (ctx.response) with a status it computed. One Node refuses (0, 1000) or that is no final
// answer (1xx) went out as a 500 with the plugin's own body, not the error envelope clients parse, and named no
// plugin: it is refused before anything is written, so the client gets the spec's 500 INTERNAL and the log the plugin.
import type { GatewayContext } from "./context.ts";
import { pluginThatAnswered } from "./compose.ts";

/** A fault of a third-party plugin's that the request fails with; the log names `plugin` (never the client's answer). */
export class PluginFault extends Error {
  constructor(readonly plugin: string | undefined, message: string) {
    super(message);
    this.name = "PluginFault";
  }
}

/** The fault of an answer whose status cannot be sent; undefined when it can. */
export function answerStatusFault(ctx: GatewayContext): PluginFault | undefined {
  const r = ctx.response;
  if (!r || r.kind === "web") return undefined; // a web Response cannot be made with such a status
  const { status } = r;
  if (Number.isInteger(status) && status >= 200 && status <= 599) return undefined;
  const plugin = pluginThatAnswered(ctx);
  const who = plugin === undefined ? "the pipeline" : `plugin "${plugin}"`;
  return new PluginFault(plugin, `${who} answered with status ${JSON.stringify(status)}; an answer's status is an integer from 200 to 599`);
}
