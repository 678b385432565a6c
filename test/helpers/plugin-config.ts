// A gateway.yaml for the third-party plugin tests: the sim provider and model, one key, the plugins given and, when
// given, a pipeline.
import { writeFileSync } from "node:fs";
import YAML from "yaml";

/** Writes the config to `file` and returns `file`. */
export function writePluginConfig(file: string, plugins: Record<string, unknown>, pipeline?: string[]): string {
  writeFileSync(file, YAML.stringify({
    store: { kind: "memory" },
    metrics: { listener: false },
    providers: { sim: { protocol: "sim" } },
    models: { "sim/echo": { endpoints: [{ provider: "sim", model: "echo" }] } },
    projects: { demo: { keys: [{ id: "k", sha256: "8d73c889f7b0cdb4f6d43d374791ef31c60f88765de7577cc2fcd01d6496d345" }] } },
    plugins,
    ...(pipeline ? { pipeline } : {}),
  }));
  return file;
}
