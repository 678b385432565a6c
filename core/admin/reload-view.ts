// The last config reload as the admin API shows it (GET /admin/v1/config and /admin/v1/config/loaded read the same
// Gateway.lastReload): when, what started it, whether it was swapped in, why not, what it changed; null until the
// first reload since the process started.
import type { ReloadStatus } from "../gateway.ts";

export function reloadView(last: ReloadStatus | undefined) {
  if (!last) return null;
  return { at: last.at, trigger: last.trigger, ok: last.ok, ...(last.problems ? { problems: last.problems } : {}), ...(last.changes ? { changes: last.changes } : {}) };
}
