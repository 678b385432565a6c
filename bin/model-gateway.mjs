#!/usr/bin/env node
// Runs the gateway bundled into dist/ (bin/build.mjs builds it on the first start and whenever a source is newer):
// plain JavaScript, not the TypeScript sources through tsx, whose per-closure __name() calls and loader thread cost
// CPU per request and idle memory. When the bundle cannot be built (a read-only install, a build error) it falls back
// to the sources through tsx, saying so on stderr.
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensureBuilt, ROOT } from "./build.mjs";

// Until `start` has a SIGHUP handler, SIGHUP would end the process (exit 129): from here on it is noted instead, in
// the global core/early-sighup.ts shares, which takes it over (and reloads once the gateway listens).
if (process.argv[2] === "start") {
  const held = {
    asked: false,
    listener: () => {
      held.asked = true;
      process.stderr.write("SIGHUP before the gateway listened: the config is read again once it does\n");
    },
  };
  globalThis[Symbol.for("model-gateway.sighup-before-listen")] = held;
  process.on("SIGHUP", held.listener);
}

let built;
try {
  built = await ensureBuilt();
} catch (err) {
  const why = String(err?.message ?? err).split("\n")[0];
  process.stderr.write(`model-gateway: no bundle in ${join(ROOT, "dist")} (${why}); running the sources through tsx\n`);
}

let cli;
if (built) {
  process.setSourceMapsEnabled(true); // logged stacks point at the .ts sources (dist/*.mjs.map)
  cli = await import(pathToFileURL(built.cli).href);
  // Third-party plugins may be TypeScript, and import `model-gateway/plugin`: register the loaders only then, after
  // the bundle is loaded, so the bundle itself is never transformed.
  cli.beforePluginImport(() => registerPluginLoaders(built.plugin));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import("../core/cli.ts");
  cli.beforePluginImport(() => registerPluginHooks(pathToFileURL(join(ROOT, "core/public/plugin.ts")).href));
}
await cli.main(process.argv.slice(2));

/**
 * tsx's loader for .ts plugin files, and bin/plugin-hooks.mjs (registered last, so it runs first): it resolves
 * `model-gateway/plugin`, from any plugin, to the bundle's plugin entry, whose GatewayError and definePlugin are the
 * very ones the bundled gateway checks against, and keeps tsx away from dist/.
 */
async function registerPluginLoaders(pluginEntry) {
  const tsx = await import("tsx/esm/api");
  tsx.register();
  await registerPluginHooks(pathToFileURL(pluginEntry).href, pathToFileURL(dirname(pluginEntry)).href + "/");
}

/** bin/plugin-hooks.mjs: `model-gateway/plugin` is `entry` (a URL) for every plugin; files under `dist` load as is. */
async function registerPluginHooks(entry, dist) {
  const { register } = await import("node:module");
  register("./plugin-hooks.mjs", import.meta.url, { data: { entry, dist } });
}
