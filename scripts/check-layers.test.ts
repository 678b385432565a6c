import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { COMPOSITION_ROOT, DRIVER_REGISTRY, cycles, importGraph, layerViolations } from "./check-layers.ts";

const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

describe("check-layers", () => {
  it("finds a cycle, type imports and self-imports included, and nothing in a DAG", () => {
    expect(cycles(graph({ "core/a.ts": ["core/b.ts"], "core/b.ts": ["plugins/c.ts"], "plugins/c.ts": ["core/a.ts"] })))
      .toEqual([["core/a.ts", "core/b.ts", "plugins/c.ts"]]);
    expect(cycles(graph({ "core/a.ts": ["core/a.ts"] }))).toEqual([["core/a.ts"]]);
    expect(cycles(graph({ "core/a.ts": ["core/b.ts"], "core/b.ts": [], "plugins/c.ts": ["core/a.ts", "core/b.ts"] }))).toEqual([]);
  });

  it("flags core files other than the composition root that import plugins/ or providers/", () => {
    const g = graph({
      [COMPOSITION_ROOT]: ["plugins/index.ts", "providers/registry.ts"],
      "core/x.ts": ["providers/types.ts", "core/y.ts"],
      "core/x.test.ts": ["plugins/index.ts"],
      "plugins/index.ts": ["core/x.ts"],
      "providers/gemini/chat.ts": ["plugins/stream-transcoder/index.ts", "core/x.ts"],
    });
    expect(layerViolations(g)).toEqual(["core/x.ts -> providers/types.ts", "providers/gemini/chat.ts -> plugins/stream-transcoder/index.ts"]);
  });

  it("flags a plugin importing another plugin's files, not its own or core", () => {
    const g = graph({
      "plugins/budget/index.ts": ["plugins/budget/estimate.ts", "core/metering/meter.ts", "plugins/usage-metering/meter.ts"],
      "plugins/budget/order.test.ts": ["plugins/allowlist/index.ts"],
      "plugins/index.ts": ["plugins/budget/index.ts"],
    });
    expect(layerViolations(g)).toEqual(["plugins/budget/index.ts -> plugins/usage-metering/meter.ts"]);
  });

  it("flags a providers file importing another driver's files, tests included; codecs, translators, shared files and the registry are fine", () => {
    const g = graph({
      "providers/vertex/claude.ts": ["providers/vertex/send.ts", "providers/codecs/anthropic-messages/answer.ts", "providers/http.ts", "providers/anthropic/request.ts"],
      "providers/vertex/claude.test.ts": ["providers/gemini/errors.ts"],
      "providers/gemini/count-tokens.ts": ["providers/translate/chat-to-gemini/request.ts", "providers/codecs/gemini/errors.ts"],
      "providers/codecs/gemini/answer.ts": ["providers/codecs/gemini/errors.ts", "providers/gemini/request.ts"],
      "providers/translate/chat-to-messages/stream.ts": ["providers/codecs/anthropic-messages/usage.ts", "providers/anthropic/errors.ts"],
      "providers/http.ts": ["core/errors.ts", "providers/bedrock/auth.ts"],
      [DRIVER_REGISTRY]: ["providers/anthropic/index.ts", "providers/vertex/index.ts"],
    });
    expect(layerViolations(g)).toEqual([
      "providers/vertex/claude.ts -> providers/anthropic/request.ts",
      "providers/vertex/claude.test.ts -> providers/gemini/errors.ts",
      "providers/codecs/gemini/answer.ts -> providers/gemini/request.ts",
      "providers/translate/chat-to-messages/stream.ts -> providers/anthropic/errors.ts",
      "providers/http.ts -> providers/bedrock/auth.ts",
    ]);
  });

  it("reports a cross-driver import planted in a source tree, a type-only one included", () => {
    const root = mkdtempSync(join(tmpdir(), "check-layers-"));
    try {
      const files: Record<string, string> = {
        "core/errors.ts": "export class GatewayError extends Error {}\n",
        "plugins/index.ts": "export const plugins = [];\n",
        "providers/codecs/anthropic-messages/answer.ts": "export const messagesAnswer = 1;\n",
        "providers/anthropic/request.ts": "export interface MessagesBody { model: string }\n",
        "providers/bedrock/invoke.ts": 'import { messagesAnswer } from "../codecs/anthropic-messages/answer.ts";\nexport const invoke = messagesAnswer;\n',
        "providers/vertex/claude.ts": 'import type { MessagesBody } from "../anthropic/request.ts";\nimport { messagesAnswer } from "../codecs/anthropic-messages/answer.ts";\nexport const claude = (b: MessagesBody) => [b, messagesAnswer];\n',
      };
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      }
      expect(layerViolations(importGraph(root))).toEqual(["providers/vertex/claude.ts -> providers/anthropic/request.ts"]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("reads type-only imports and re-exports from the source", () => {
    const g = importGraph(resolve(import.meta.dirname, ".."));
    // context.ts only has `import type` lines: they must be edges too.
    expect(g.get("core/pipeline/context.ts")).toContain("core/contracts/provider.ts");
    expect(g.get("core/builtins.ts")).toContain("plugins/index.ts");
  });

  it("the tree has no import cycle, one composition root and no driver importing another", () => {
    const g = importGraph(resolve(import.meta.dirname, ".."));
    expect(cycles(g)).toEqual([]);
    expect(layerViolations(g)).toEqual([]);
  });
});
