// docs/agents.md tells a reader which model of each upstream protocol the agents suite (npm run test:agents) runs on:
// it must name the models the suite's world (test/helpers/agent-world.ts) serves, no retired one in their place.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MODEL } from "./helpers/agent-world.ts";

describe("docs/agents.md, How this is checked", () => {
  it("names the models the agents suite runs on", () => {
    const doc = readFileSync(new URL("../docs/agents.md", import.meta.url), "utf8");
    const start = doc.indexOf("runs each one through");
    const end = doc.indexOf("The upstreams are fakes", start);
    expect(start, "the paragraph that names the suite's models").toBeGreaterThan(0);
    const named = [...doc.slice(start, end).matchAll(/`([a-z0-9-]+\/[a-z0-9.-]+)`/g)].map((m) => m[1]);
    expect(named.sort()).toEqual(Object.values(MODEL).sort());
  });
});
