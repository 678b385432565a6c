// A loaded config: the runtime settings plus the resolved pipeline and the built-ins it was resolved against
// (kept so that a reload, and bring-your-own-key drivers, use the same ones). Separate from runtime.ts because a
// plugin definition's handler takes a context that holds a RuntimeConfig (no type cycle).
import type { RuntimeConfig } from "./runtime.ts";
import type { PluginDefinition } from "../pipeline/define.ts";
import type { Builtins } from "../contracts/builtins.ts";
import type { ConfigTexts } from "./config-texts.ts";

export interface PipelineEntry {
  name: string;
  def: PluginDefinition<any, any>;
  options: unknown;
}

export interface LoadedConfig extends RuntimeConfig {
  pipeline: PipelineEntry[];
  builtins: Builtins;
  /** The texts of the files it was loaded from (gateway.yaml first, then its includes). */
  texts?: ConfigTexts;
}
