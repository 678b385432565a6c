// What of a JSON answer the output rules read and placeholders are restored in, beyond message text: the inputs of
// the calls a Messages answer makes through server tools and MCP, as a tool_use's are.
import { describe, expect, it } from "vitest";
import type { ClientProtocol } from "../../../core/pipeline/context.ts";
import { runFor } from "../testkit.ts";
import { walkAnswer } from "./answer.ts";

const SECRET = "sk-ant-api03-" + "A".repeat(93) + "AA";
const RULES = {
  rules: [
    { name: "pii", detect: ["email" as const], action: "redact" as const },
    { name: "no-secrets", detect: ["secret" as const], on: ["output" as const], action: "block" as const },
  ],
};

/** Walks `body` (built with [EMAIL_1]) after the input handed out [EMAIL_1] for alice@example.com; returns it, restored. */
function restored<T>(protocol: ClientProtocol, body: T): T {
  const run = runFor(RULES, protocol);
  run.input("write to alice@example.com", false); // hands out [EMAIL_1]
  walkAnswer(protocol, body, (t) => run.output(t));
  return body;
}

/** The error code the output rules throw walking `body`, or undefined when it passes. */
function refusal(protocol: ClientProtocol, body: unknown): string | undefined {
  const run = runFor(RULES, protocol);
  try {
    walkAnswer(protocol, body, (t) => run.output(t));
  } catch (e: any) {
    return e.code;
  }
  return undefined;
}

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
    const body = restored("anthropic", answer("[EMAIL_1] news"));
    expect(body.content.map((b) => Object.values(b.input)[0])).toEqual(["alice@example.com news", "alice@example.com news", "alice@example.com news"]);
  });

  it.each(["server_tool_use", "mcp_tool_use"])("are refused when a %s input carries a secret", (type) => {
    const body = answer("nothing");
    const b = body.content.find((x) => x.type === type)!;
    b.input = { q: SECRET };
    expect(refusal("anthropic", body)).toBe("GUARDRAIL_BLOCKED");
  });
});

/** A Messages answer with what a web fetch, a code run, a bash run and an MCP server answered, each carrying `text`. */
const results = (text: string): any => ({
  type: "message",
  role: "assistant",
  content: [
    { type: "web_fetch_tool_result", tool_use_id: "srvtoolu_1", content: { type: "web_fetch_result", url: "https://x", content: { type: "document", title: text, source: { type: "text", media_type: "text/plain", data: text } } } },
    { type: "code_execution_tool_result", tool_use_id: "srvtoolu_2", content: { type: "code_execution_result", stdout: text, stderr: text, return_code: 0, content: [] } },
    { type: "bash_code_execution_tool_result", tool_use_id: "srvtoolu_3", content: { type: "bash_code_execution_result", stdout: text, stderr: "", return_code: 0, content: [] } },
    { type: "mcp_tool_result", tool_use_id: "mcptoolu_1", is_error: false, content: [{ type: "text", text }] },
  ],
});

describe("Messages answers: what server tools and MCP servers answered", () => {
  it("comes back with its placeholders restored", () => {
    const body = restored("anthropic", results("[EMAIL_1] page"));
    const [fetch, code, bash, mcp] = body.content;
    const want = "alice@example.com page";
    expect([fetch.content.content.title, fetch.content.content.source.data, code.content.stdout, code.content.stderr, bash.content.stdout, mcp.content[0].text]).toEqual([want, want, want, want, want, want]);
  });

  it.each([0, 1, 2, 3])("is refused when result %i carries a secret", (i) => {
    const body = results("nothing");
    body.content = [results(SECRET).content[i]];
    expect(refusal("anthropic", body)).toBe("GUARDRAIL_BLOCKED");
  });
});

describe("Gemini answers: code the model ran and its output", () => {
  const candidate = (text: string): any => ({
    candidates: [{ index: 0, content: { role: "model", parts: [{ executableCode: { language: "PYTHON", code: text } }, { codeExecutionResult: { outcome: "OUTCOME_OK", output: text } }] } }],
  });

  it("come back with their placeholders restored", () => {
    const body = restored("gemini", candidate("[EMAIL_1]"));
    const [code, result] = body.candidates[0].content.parts;
    expect([code.executableCode.code, result.codeExecutionResult.output]).toEqual(["alice@example.com", "alice@example.com"]);
  });

  it.each([0, 1])("are refused when part %i carries a secret", (i) => {
    const body = candidate("nothing");
    body.candidates[0].content.parts = [candidate(SECRET).candidates[0].content.parts[i]];
    expect(refusal("gemini", body)).toBe("GUARDRAIL_BLOCKED");
  });
});

describe("Responses answers: MCP calls and the code interpreter", () => {
  const output = (text: string): any => ({
    object: "response",
    output: [
      { type: "mcp_call", id: "mcp_1", server_label: "crm", name: "lookup", arguments: JSON.stringify({ who: text }), output: text },
      { type: "code_interpreter_call", id: "ci_1", container_id: "c", code: text, outputs: [{ type: "logs", logs: text }] },
    ],
  });

  it("come back with their placeholders restored", () => {
    const body = restored("responses", output("[EMAIL_1]"));
    const [mcp, ci] = body.output;
    expect([JSON.parse(mcp.arguments).who, mcp.output, ci.code, ci.outputs[0].logs]).toEqual(Array(4).fill("alice@example.com"));
  });

  it.each([
    ["mcp_call arguments", (it: any) => (it[0].arguments = JSON.stringify({ k: SECRET }))],
    ["mcp_call output", (it: any) => (it[0].output = SECRET)],
    ["code_interpreter_call code", (it: any) => (it[1].code = `k = "${SECRET}"`)],
  ])("are refused when the %s carries a secret", (_, plant) => {
    const body = output("nothing");
    plant(body.output);
    expect(refusal("responses", body)).toBe("GUARDRAIL_BLOCKED");
  });
});

describe("Chat answers: an audio answer's transcript", () => {
  const audio = (transcript: string): any => ({ object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: null, audio: { id: "audio_1", data: "UklGR", expires_at: 1, transcript } }, finish_reason: "stop" }] });

  it("comes back with its placeholders restored", () => {
    const body = restored("openai", audio("Mail [EMAIL_1]"));
    expect(body.choices[0].message.audio).toMatchObject({ transcript: "Mail alice@example.com", data: "UklGR" });
  });

  it("is refused when it carries a secret", () => {
    expect(refusal("openai", audio(`the key is ${SECRET}`))).toBe("GUARDRAIL_BLOCKED");
  });
});

describe("Messages answers: what the text editor tool answered", () => {
  const edit = (text: string): any => ({
    type: "message",
    role: "assistant",
    content: [
      { type: "text_editor_code_execution_tool_result", tool_use_id: "srvtoolu_1", content: { type: "text_editor_code_execution_str_replace_result", old_start: 1, old_lines: 1, new_start: 1, new_lines: 2, lines: ["-x", `+to = "${text}"`] } },
      { type: "text_editor_code_execution_tool_result", tool_use_id: "srvtoolu_2", content: { type: "text_editor_code_execution_view_result", file_type: "text", content: text, num_lines: 1, start_line: 1, total_lines: 1 } },
    ],
  });

  it("comes back with its placeholders restored", () => {
    const body = restored("anthropic", edit("[EMAIL_1]"));
    expect(body.content[0].content.lines).toEqual(["-x", '+to = "alice@example.com"']);
    expect(body.content[1].content.content).toBe("alice@example.com");
  });

  it.each([0, 1])("is refused when result %i carries a secret", (i) => {
    const body = edit("nothing");
    body.content = [edit(SECRET).content[i]];
    expect(refusal("anthropic", body)).toBe("GUARDRAIL_BLOCKED");
  });
});

describe("Responses answers: shell commands, patches and web searches", () => {
  const output = (text: string): any => ({
    object: "response",
    output: [
      { type: "shell_call", id: "sh_1", call_id: "c1", status: "completed", action: { commands: ["ls", `git commit --author "${text}"`], timeout_ms: null, max_output_length: null } },
      { type: "local_shell_call", id: "ls_1", call_id: "c2", status: "completed", action: { type: "exec", command: ["mail", text], env: {} } },
      { type: "apply_patch_call", id: "ap_1", call_id: "c3", status: "completed", operation: { type: "update_file", path: "a.txt", diff: `@@\n-x\n+${text}\n` } },
      { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: text, queries: [text] } },
    ],
  });
  const fields = (body: any): string[] => {
    const [sh, ls, ap, ws] = body.output;
    return [sh.action.commands[1], ls.action.command[1], ap.operation.diff, ws.action.query, ws.action.queries[0]];
  };

  it("come back with their placeholders restored", () => {
    const body = restored("responses", output("[EMAIL_1]"));
    const e = "alice@example.com";
    expect(fields(body)).toEqual([`git commit --author "${e}"`, e, `@@\n-x\n+${e}\n`, e, e]);
  });

  it.each([0, 1, 2, 3])("are refused when item %i carries a secret", (i) => {
    const body = output("nothing");
    body.output = [output(SECRET).output[i]];
    expect(refusal("responses", body)).toBe("GUARDRAIL_BLOCKED");
  });
});

describe("Messages answers: blocks of types the gateway does not know", () => {
  /** A compaction, a made-up block with text at depth, and one inside an MCP result, each carrying `text`. */
  const unknown = (text: string): any => ({
    type: "message",
    role: "assistant",
    content: [
      { type: "compaction", content: text, encrypted_content: "RW5j" },
      { type: "advisor_note", note: { lines: ["Earlier:", text] } },
      { type: "mcp_tool_result", tool_use_id: "mcptoolu_1", is_error: false, content: [{ type: "tool_reference", detail: text }] },
    ],
  });

  it("have every string but their type read, and placeholders restored in place", () => {
    const seen: string[] = [];
    walkAnswer("anthropic", unknown("t"), (s) => (seen.push(s), s));
    expect(seen).toEqual(["t", "RW5j", "Earlier:", "t", "t"]);
    const body = restored("anthropic", unknown("to [EMAIL_1]"));
    const [compaction, note, mcp] = body.content;
    expect([compaction.content, note.note.lines[1], mcp.content[0].detail]).toEqual(Array(3).fill("to alice@example.com"));
    expect([compaction.type, note.type, mcp.content[0].type]).toEqual(["compaction", "advisor_note", "tool_reference"]);
  });

  it.each([0, 1, 2])("are refused when block %i carries a secret", (i) => {
    const body = unknown("nothing");
    body.content = [unknown(SECRET).content[i]];
    expect(refusal("anthropic", body)).toBe("GUARDRAIL_BLOCKED");
  });

  it("leave known blocks as they were handled: thinking, its signature and a search result's encrypted content unread", () => {
    const seen: string[] = [];
    const body = {
      content: [
        { type: "thinking", thinking: "hmm", signature: "sig" },
        { type: "redacted_thinking", data: "enc" },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://x", title: "T", encrypted_content: "E" }] },
        { type: "text", text: "answer" },
      ],
    };
    walkAnswer("anthropic", body, (s) => (seen.push(s), s));
    expect(seen).toEqual(["answer"]);
  });
});
