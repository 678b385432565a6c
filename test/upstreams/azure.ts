// Fake Azure OpenAI (reference protocols-2 §4): /openai/deployments/{deployment}/chat/completions?api-version=…,
// the api-key header, and its error shapes (§4.4): DeploymentNotFound 404 for an unknown deployment, a bare
// "Resource not found" 404 for an api-version it does not serve, and the content-filter 400 (code content_filter,
// innererror.content_filter_result) for a prompt containing CONTENT_FILTER_TRIGGER.
import type { ServerResponse } from "node:http";
import { sendJson, startFake, type FakeServer } from "./http-fake.ts";

export const AZURE_KEY = "az-fake-key";
export const AZURE_API_VERSION = "2024-10-21";
export const CONTENT_FILTER_TRIGGER = "forbidden topic";

export type FakeAzure = FakeServer & { baseUrl: string; deployments: Set<string> };

const FILTERED = {
  error: {
    code: "content_filter",
    message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
    param: "prompt",
    type: null,
    status: 400,
    innererror: {
      code: "ResponsibleAIPolicyViolation",
      content_filter_result: {
        hate: { filtered: true, severity: "medium" },
        self_harm: { filtered: false, severity: "safe" },
        sexual: { filtered: false, severity: "safe" },
        violence: { filtered: false, severity: "safe" },
      },
    },
  },
};

const cfr = { hate: { filtered: false, severity: "safe" }, self_harm: { filtered: false, severity: "safe" }, sexual: { filtered: false, severity: "safe" }, violence: { filtered: false, severity: "safe" } };

function answer(res: ServerResponse, deployment: string, stream: boolean): void {
  const base = { id: "chatcmpl-az1", created: 1700000000, model: "gpt-4o-mini-2024-07-18", system_fingerprint: "fp_az" };
  const text = `Azure ${deployment} says hi`;
  if (!stream) {
    return sendJson(res, 200, {
      ...base, object: "chat.completion",
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: cfr }],
      choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", content: text, refusal: null }, content_filter_results: cfr }],
      usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 },
    });
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const w = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
  const chunk = { ...base, object: "chat.completion.chunk" };
  w({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: [{ prompt_index: 0, content_filter_results: cfr }] });
  w({ ...chunk, choices: [{ content_filter_results: {}, delta: { content: "", refusal: null, role: "assistant" }, finish_reason: null, index: 0, logprobs: null }] });
  w({ ...chunk, choices: [{ content_filter_results: cfr, delta: { content: text }, finish_reason: null, index: 0, logprobs: null }] });
  w({ ...chunk, choices: [{ content_filter_results: {}, delta: {}, finish_reason: "stop", index: 0, logprobs: null }] });
  w({ ...chunk, choices: [], usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 } });
  res.end("data: [DONE]\n\n");
}

/** Serves the deployments named (all others are DeploymentNotFound). */
export async function startFakeAzure(deployments: string[]): Promise<FakeAzure> {
  const fake = (await startFake((req, res) => {
    const url = new URL(req.path, "http://azure.local");
    if (url.searchParams.get("api-version") !== AZURE_API_VERSION) return sendJson(res, 404, { error: { code: "404", message: "Resource not found" } });
    if (req.headers["api-key"] !== AZURE_KEY) {
      return sendJson(res, 401, { error: { code: "401", message: "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource." } });
    }
    const m = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(url.pathname);
    if (req.method !== "POST" || !m) return sendJson(res, 404, { error: { code: "404", message: "Resource not found" } });
    const deployment = decodeURIComponent(m[1]!);
    if (!fake.deployments.has(deployment)) {
      return sendJson(res, 404, { error: { code: "DeploymentNotFound", message: "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again." } });
    }
    if (JSON.stringify(req.body?.messages ?? "").includes(CONTENT_FILTER_TRIGGER)) return sendJson(res, 400, FILTERED);
    answer(res, deployment, req.body?.stream === true);
  }, (status) => ({ error: { code: String(status), message: `fake azure failure ${status}` } }))) as FakeAzure;
  fake.baseUrl = fake.origin;
  fake.deployments = new Set(deployments);
  return fake;
}
