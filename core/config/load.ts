// loadConfig: gateway.yaml resolved against the shipped built-ins (core/builtins.ts). Only entry points import
// this file (cli, server, usage command); inside core, reloads go through resolve.ts with the config's own built-ins.
import { builtins } from "../builtins.ts";
import { resolveConfig, type LoadOptions } from "./resolve.ts";
import type { LoadedConfig } from "./loaded.ts";

export type { LoadOptions } from "./resolve.ts";

export function loadConfig(file: string, opts: LoadOptions = {}): Promise<LoadedConfig> {
  return resolveConfig(builtins, file, opts);
}
