// Boot-time checks of the pipeline: every name known, no duplicates, every dependency placed before its user.
import { dependsOnProblem } from "./define.ts";

export interface OrderProblem {
  index: number;     // position in `pipeline:` the problem is reported at
  message: string;
}

export function checkOrder(names: string[], dependsOn: (name: string) => unknown): OrderProblem[] {
  const problems: OrderProblem[] = [];
  const firstIndex = new Map<string, number>();
  names.forEach((name, index) => {
    if (firstIndex.has(name)) problems.push({ index, message: `plugin "${name}" is listed twice` });
    else firstIndex.set(name, index);
  });
  names.forEach((name, index) => {
    const deps = dependsOn(name);
    // A plugin exported without definePlugin() is not checked there: a string here was read letter by letter.
    const wrong = dependsOnProblem(deps);
    if (wrong) {
      problems.push({ index, message: `plugin ${name}: ${wrong}` });
      return;
    }
    for (const dep of (deps as string[] | undefined) ?? []) {
      const at = firstIndex.get(dep);
      if (at === undefined) problems.push({ index, message: `${name} needs ${dep} before it, but ${dep} is not in the pipeline` });
      else if (at > index) problems.push({ index, message: `${name} needs ${dep} before it, but ${dep} comes after it` });
    }
  });
  return problems;
}
