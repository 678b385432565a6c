// What of a JSON answer the output rules read and placeholders are restored in, beyond message text: the inputs of
// the calls a Messages answer makes through server tools and MCP, as a tool_use's are.
import { describe, expect, it } from "vitest";
import { runFor } from "../testkit.ts";
import { walkAnswer } from "./answer.ts";

const SECRET = "sk-ant-api03-" + "A".repeat(93) + "AA";
const RULES = {
  rules: [
    { name: "pii", detect: ["email" as const], action: "redact" as const },
    { name: "no-secrets", detect: ["secret" as const], on: ["output" as const], action: "block" as const },
  ],
};

/** A Messages answer with a web search, an MCP call and a tool call, each carrying `text`. */
const answer = (text: string): { type: string; role: string; content: { type: string; input: Record<string, string>; [k: string]: unknown }[] } => ({
  type: "message",
  role: "assistant",
  content: [
    { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: text } },
    { type: "mcp_tool_use", id: "mcptoolu_1", name: "lookup", server_name: "crm", input: { who: text } },
    { type: "tool_use", id: "toolu_1", name: "send", input: { to: text } },
  ],
});

describe("Messages answers: the inputs of server tool and MCP calls", () => {
  it("come back with their placeholders restored", () => {
    const run = runFor(RULES, "anthropic");
    run.input("write to alice@example.com", false); // hands out [EMAIL_1]
    const body = answer("[EMAIL_1] news");
    walkAnswer("anthropic", body, (t) => run.output(t));
    expect(body.content.map((b) => Object.values(b.input)[0])).toEqual(["alice@example.com news", "alice@example.com news", "alice@example.com news"]);
  });

  it.each(["server_tool_use", "mcp_tool_use"])("are refused when a %s input carries a secret", (type) => {
    const run = runFor(RULES, "anthropic");
    const body = answer("nothing");
    const b = body.content.find((x) => x.type === type)!;
    b.input = { q: SECRET };
    let code: string | undefined;
    try {
      walkAnswer("anthropic", body, (t) => run.output(t));
    } catch (e: any) {
      code = e.code;
    }
    expect(code).toBe("GUARDRAIL_BLOCKED");
  });
});
