// Boot-time checks of the pipeline: every name known, no duplicates, every dependency placed before its user.

export interface OrderProblem {
  index: number;     // position in `pipeline:` the problem is reported at
  message: string;
}

export function checkOrder(names: string[], dependsOn: (name: string) => string[] | undefined): OrderProblem[] {
  const problems: OrderProblem[] = [];
  const firstIndex = new Map<string, number>();
  names.forEach((name, index) => {
    if (firstIndex.has(name)) problems.push({ index, message: `plugin "${name}" is listed twice` });
    else firstIndex.set(name, index);
  });
  names.forEach((name, index) => {
    for (const dep of dependsOn(name) ?? []) {
      const at = firstIndex.get(dep);
      if (at === undefined) problems.push({ index, message: `${name} needs ${dep} before it, but ${dep} is not in the pipeline` });
      else if (at > index) problems.push({ index, message: `${name} needs ${dep} before it, but ${dep} comes after it` });
    }
  });
  return problems;
}
