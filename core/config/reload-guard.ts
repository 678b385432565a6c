// A reload that would leave a serving gateway with no project at all is refused. Such a file is almost always one
// caught half-written (cut off before projects:) or emptied by mistake, and taking it would answer every client 401
// until someone noticed; starting afresh with it is still allowed, so doing it on purpose means a restart.
import type { RuntimeConfig } from "./runtime.ts";
import { formatProblem } from "./source.ts";

export function droppedEveryProject(old: RuntimeConfig, next: RuntimeConfig): string | undefined {
  if (old.projects.size === 0 || next.projects.size > 0) return undefined;
  return formatProblem({
    file: next.file, line: 1, column: 1,
    message: `the new config has no projects: it would remove all ${old.projects.size} project(s) and the ${old.keys.size} gateway.yaml key(s) serving now and refuse every ` +
      `client; refused as a reload (a file cut short?). To run without projects on purpose, restart the gateway with this file`,
  });
}
