// Where third-party plugin modules (gateway.yaml `plugins: {x: {module: ...}}`) are imported. From the sources (tsx,
// vitest) a plain import() loads a .ts plugin. The bundled bin installs a preparation that runs once, before the
// first such import: it registers tsx's loader (and points `model-gateway/plugin` at the bundle's own copy). Late, so
// the bundle itself is never transformed and a gateway without third-party plugins carries no loader thread.
let prepare: (() => Promise<void>) | undefined;
let prepared: Promise<void> | undefined;

/** Run `fn` once before the first plugin module is imported (the bin, when it runs the bundle). */
export function beforePluginImport(fn: () => Promise<void>): void {
  prepare = fn;
  prepared = undefined;
}

export async function importPluginModule(url: string): Promise<Record<string, any>> {
  if (prepare) await (prepared ??= prepare());
  try {
    return await import(url);
  } catch (err) {
    // An ES module (ours: model-gateway/plugin) required from a plugin that was loaded as CommonJS. Node's message
    // speaks of a cycle and lazy loading; what the author can change is the plugin's module type.
    if ((err as { code?: unknown })?.code !== "ERR_REQUIRE_CYCLE_MODULE") throw err;
    const hint = `it was loaded as CommonJS (a package.json above it says "type": "commonjs"): write it as an ES module, named .mts or .mjs, or set "type": "module" in that package.json`;
    throw new Error(`${(err as Error).message.split(". ")[0]}: ${hint}`, { cause: err });
  }
}
