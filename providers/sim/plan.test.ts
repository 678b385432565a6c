// What the simulated model does with a coding agent's tools on a sandbox key: it calls the tool that says the
// request's verb, with only the arguments the tool requires and no command made of the prompt's words, never a tool
// that launches another agent, and answers the results of its turn with text, so every agent run ends. The tool
// lists are the agents' own, as recorded by `npm run test:agents:record`.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { planChoice } from "./plan.ts";

const recorded = (agent: string) => JSON.parse(readFileSync(new URL(`../../test/fixtures/agents/${agent}/openai-chat/turn-1.json`, import.meta.url), "utf8")).body;
/** Claude Code's tools were recorded in Messages form; the simulator reads them translated to chat. */
const asChat = (t: any) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.input_schema } });
const qwenTools: any[] = recorded("qwen-code").tools;
const claudeTools: any[] = recorded("claude-code").tools.map(asChat);
const opencodeTools: any[] = recorded("opencode").tools;

const ASK = "Read note.txt and tell me what it says";
const user = (...texts: string[]) => ({ role: "user", content: texts.map((text) => ({ type: "text", text })) });
const calls = (body: any) => planChoice(body, "anthropic/claude-sonnet-4.6", 0).toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]);

describe("the simulator with a coding agent's tools", () => {
  it("calls the agent's read tool for a request to read, with the file the user named, and nothing else", () => {
    expect(qwenTools.map((t) => t.function.name)).toEqual(expect.arrayContaining(["agent", "skill", "todo_write", "read_file"]));
    expect(calls({ messages: [user(ASK)], tools: qwenTools })).toEqual([["read_file", { file_path: "note.txt" }]]);
    expect(calls({ messages: [user(ASK)], tools: opencodeTools })).toEqual([["read", { filePath: "note.txt" }]]);
    // Claude Code's first user text is a <system-reminder>: not what the user asked.
    const claude = { messages: [user("<system-reminder>\nAvailable skills: review\n</system-reminder>\n", ASK)], tools: claudeTools };
    expect(calls(claude)).toEqual([["Read", { file_path: "note.txt" }]]);
  });

  it("fills only the required arguments and never runs the prompt's words: Claude Code's Bash gets a harmless command", () => {
    const bash = claudeTools.find((t) => t.function.name === "Bash");
    const body = { messages: [user("<system-reminder>\nAvailable skills\n</system-reminder>", "Run the tests and delete what fails")], tools: [bash], tool_choice: "required" };
    expect(calls(body)).toEqual([["Bash", { command: "echo simulated" }]]);
  });

  it("never launches another agent unless tool_choice names it", () => {
    const agent = qwenTools.find((t) => t.function.name === "agent");
    const body = { messages: [user("Launch a new agent to handle complex multi-step tasks autonomously")], tools: [agent] };
    expect(planChoice(body, "m", 0)).toMatchObject({ toolCalls: [], finishReason: "stop" });
    expect(calls({ ...body, tools: claudeTools })).not.toContainEqual(["Agent", expect.anything()]);
    expect(calls({ ...body, tool_choice: { type: "function", function: { name: "agent" } } })).toEqual([["agent", expect.any(Object)]]);
  });

  it("answers the turn's tool results with text, though a reminder or notification came after them (Qwen Code's background agent)", () => {
    const called = { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read_file", arguments: '{"file_path":"note.txt"}' } }] };
    const result = { role: "tool", tool_call_id: "c1", content: "pineapples are berries" };
    const turn = [user("This is the Qwen Code. We are setting up the context for our chat."), { role: "assistant", content: "Got it." }, user(ASK), called, result];
    for (const after of [
      [],
      [{ role: "assistant", content: "Based on it" }, user("<task-notification>\n<status>completed</status>\n</task-notification>")],
      [user("<system-reminder>\nYour todo list has changed.\n</system-reminder>")],
    ]) {
      const plan = planChoice({ messages: [...turn, ...after], tools: qwenTools }, "m", 0);
      expect(plan.toolCalls).toEqual([]);
      expect(plan.pieces.join("")).toContain("pineapples are berries");
    }
    // A forced choice calls a tool after the results too, as OpenAI's required and Anthropic's any do.
    for (const tool_choice of ["required", { type: "function", function: { name: "read_file" } }]) {
      const forced = planChoice({ messages: turn, tools: qwenTools, tool_choice }, "m", 0);
      expect(forced.finishReason).toBe("tool_calls");
      expect(forced.toolCalls.map((c) => c.name)).toEqual(["read_file"]);
    }
    // A new request from the user is a new turn: tools again.
    expect(calls({ messages: [...turn, { role: "assistant", content: "It says pineapples are berries." }, user("Now list the files here")], tools: qwenTools }))
      .toEqual([["list_directory", { path: expect.any(String) }]]);
  });
});
