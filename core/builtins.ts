// The composition root: the only core file that imports plugins/ and providers/. It names the built-in plugins,
// drivers and translators; the rest of core gets them from here through config/load.ts (scripts/check-layers.ts enforces it).
import type { Builtins } from "./contracts/builtins.ts";
import { builtinPlugins, defaultPipeline } from "../plugins/index.ts";
import { driverFactories } from "../providers/registry.ts";
import { translators } from "../providers/translate/index.ts";

export const builtins: Builtins = {
  plugins: builtinPlugins,
  defaultPipeline,
  drivers: driverFactories,
  translators,
};
