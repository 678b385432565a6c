// The process logger from gateway.yaml's `log:` section (level, json|pretty, file relative to the config).
import { resolve } from "node:path";
import { createLogger, envLogLevel, type Logger } from "../log.ts";
import type { RuntimeConfig } from "../config/runtime.ts";

/** `shared`: other processes write to the same stderr or file (the primary of `start --workers N`). */
export function loggerFromConfig(config: RuntimeConfig, shared = false): Logger {
  const l = config.raw.log ?? {};
  return createLogger({
    // LOG_LEVEL (the variable the old logger read) still wins when set, so a one-off debug run needs no edit.
    level: envLogLevel() ?? l.level,
    format: l.format,
    file: l.file ? resolve(config.dir, l.file) : undefined,
    access: l.access,
    shared,
  });
}
