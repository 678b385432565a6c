// Where third-party plugin modules (gateway.yaml `plugins: {x: {module: ...}}`) are imported. From the sources (tsx,
// vitest) a plain import() loads a .ts plugin. The bundled bin installs a preparation that runs once, before the
// first such import: it registers tsx's loader (and points `model-gateway/plugin` at the bundle's own copy). Late, so
// the bundle itself is never transformed and a gateway without third-party plugins carries no loader thread.
import { moduleTypeHint } from "./plugin-module-type.ts";
import { pluginSyntaxError } from "./plugin-syntax.ts";

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
    // A compiled plugin that does not parse: Node's own reason and place, not the loader's scanner's (./plugin-syntax.ts).
    const syntax = await pluginSyntaxError(url, err);
    if (syntax !== undefined) throw new Error(syntax, { cause: err });
    // A TypeScript plugin loaded as the wrong module type: Node's message names the symptom (a cycle, an unexpected
    // ':', require not defined); the hint says what the author can change.
    const hint = moduleTypeHint(url, err);
    if (hint === undefined) throw err;
    throw new Error(`${firstSentence(err)}: ${hint}`, { cause: err });
  }
}

/** Node's message up to its first line or sentence (a require stack, an explanation of lazy loading, follow). */
function firstSentence(err: unknown): string {
  const message = String((err as { message?: unknown })?.message ?? err);
  return message.split("\n")[0]!.split(". ")[0]!;
}
