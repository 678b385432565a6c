// A fake OpenAI upstream for embeddings, images and videos (reference §4.1, §4.4, §4.5): OpenAI's limits and
// error envelope, base64 little-endian float32 embeddings, gpt-image (always b64_json, token usage) vs dall-e
// (n=1 on dall-e-3, url by default, revised_prompt), and Sora-style video jobs that are polled to completion.
import { encodeMp4 } from "../../providers/sim/mp4.ts";
import { approxTokens, fakeVector, sendJson, startFake, type FakeServer } from "./http-fake.ts";

export const OPENAI_KEY = "sk-fake-upstream";

export interface FakeOpenAIMedia extends FakeServer {
  baseUrl: string;
  /** Polls a video job needs before it completes. */
  videoPolls: number;
  /** When set, the next video jobs fail with this error. */
  videoFailure?: { code: string; message: string };
  /** Video jobs created so far. */
  videosCreated: number;
  /** Sora jobs by id. */
  jobs: Map<string, any>;
}

const err = (message: string, code: string | null = null, param: string | null = null, type = "invalid_request_error") => ({ error: { message, type, param, code } });

const PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

export async function startFakeOpenAIMedia(): Promise<FakeOpenAIMedia> {
  let seq = 0;
  const fake = (await startFake(async (req, res) => {
    if (req.headers.authorization !== `Bearer ${OPENAI_KEY}`) return sendJson(res, 401, err("Incorrect API key provided", "invalid_api_key"));
    const b = req.body ?? {};
    if (req.method === "POST" && req.path === "/v1/embeddings") {
      const input: unknown[] = typeof b.input === "string" ? [b.input] : Array.isArray(b.input) && typeof b.input[0] === "number" ? [b.input] : b.input;
      if (!Array.isArray(input) || input.length === 0) return sendJson(res, 400, err("'input' is a required property", null, "input"));
      if (input.length > 2048) return sendJson(res, 400, err(`'$.input' is too long. Maximum: 2048`, null, "input"));
      if (input.some((x) => x === "")) return sendJson(res, 400, err("'$.input' is invalid. Please check the API reference", null, "input"));
      const tokens = input.map((x) => (typeof x === "string" ? approxTokens(x) : (x as number[]).length));
      if (tokens.some((t) => t > 8192)) return sendJson(res, 400, err("This model's maximum context length is 8192 tokens", null, "input"));
      const total = tokens.reduce((a, c) => a + c, 0);
      if (total > 300_000) return sendJson(res, 400, err(`Requested ${total} tokens, max 300000 tokens per request`, "max_tokens_per_request"));
      if (b.dimensions !== undefined && !/^text-embedding-3/.test(b.model)) return sendJson(res, 400, err("This model does not support specifying dimensions.", null, "dimensions"));
      const dims = b.dimensions ?? (b.model === "text-embedding-3-large" ? 3072 : 1536);
      const data = input.map((x, index) => {
        const v = fakeVector(typeof x === "string" ? x : JSON.stringify(x), dims, b.model);
        return { object: "embedding", index, embedding: b.encoding_format === "base64" ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v };
      });
      // OpenAI names each call in x-request-id, as on chat.
      return sendJson(res, 200, { object: "list", data, model: `${b.model}`, usage: { prompt_tokens: total, total_tokens: total } }, { "x-request-id": `req_embed_${++seq}` });
    }
    if (req.method === "POST" && req.path === "/v1/images/generations") {
      const n = b.n ?? 1;
      const dalle = /^dall-e/.test(b.model);
      if (b.model === "dall-e-3" && n !== 1) return sendJson(res, 400, err("You must provide n=1 for this model.", null, "n"));
      if (!dalle && b.response_format !== undefined) return sendJson(res, 400, err("Unknown parameter: 'response_format'.", "unknown_parameter", "response_format"));
      const created = 1712697600;
      const asUrl = dalle && (b.response_format ?? "url") === "url";
      const data = Array.from({ length: n }, (_, i) => {
        const item: Record<string, string> = asUrl ? { url: `${fake.origin}/files/img-${i}.png?sig=upstream-secret` } : { b64_json: PNG_1x1 };
        if (b.model === "dall-e-3") item.revised_prompt = `A detailed rendering of ${b.prompt}`;
        return item;
      });
      const body: Record<string, unknown> = { created, data };
      if (!dalle) {
        body.usage = { input_tokens: approxTokens(b.prompt), input_tokens_details: { text_tokens: approxTokens(b.prompt), image_tokens: 0 }, output_tokens: 272 * n, total_tokens: approxTokens(b.prompt) + 272 * n };
        body.output_format = b.output_format ?? "png";
        body.size = b.size ?? "1024x1024";
        body.quality = b.quality ?? "high";
      }
      return sendJson(res, 200, body, { "x-request-id": `req_image_${++seq}` });
    }
    if (req.method === "GET" && req.path.startsWith("/files/")) {
      res.writeHead(200, { "content-type": "image/png" });
      res.end(Buffer.from(PNG_1x1, "base64"));
      return;
    }
    if (req.method === "POST" && req.path === "/v1/videos") {
      if (typeof b.prompt !== "string") return sendJson(res, 400, err("'prompt' is required", null, "prompt"));
      if (b.seconds !== undefined && !["4", "8", "12"].includes(b.seconds)) return sendJson(res, 400, err("Invalid value for 'seconds': expected one of '4', '8', '12'.", null, "seconds"));
      if (b.size !== undefined && !["720x1280", "1280x720", "1024x1792", "1792x1024"].includes(b.size)) return sendJson(res, 400, err("Invalid value for 'size'.", null, "size"));
      fake.videosCreated++;
      const id = `video_${++seq}${Date.now().toString(16)}`;
      const job = {
        id, object: "video", model: b.model ?? "sora-2", status: "queued", progress: 0, created_at: Math.floor(Date.now() / 1000),
        completed_at: null, expires_at: null, prompt: b.prompt, seconds: b.seconds ?? "4", size: b.size ?? "720x1280",
        remixed_from_video_id: null, error: null, polls: 0, failure: fake.videoFailure,
      };
      fake.jobs.set(id, job);
      return sendJson(res, 200, publicJob(job), { "openai-poll-after-ms": "10" });
    }
    const m = /^\/v1\/videos\/([^/?]+)(\/content)?(\?.*)?$/.exec(req.path);
    if (req.method === "GET" && m) {
      const job = fake.jobs.get(decodeURIComponent(m[1]!));
      if (!job) return sendJson(res, 404, err(`Video with id '${m[1]}' not found.`, null, null, "invalid_request_error"));
      if (m[2]) {
        if (job.status !== "completed") return sendJson(res, 400, err("Video is not ready yet.", null, null));
        const [w, h] = job.size.split("x").map((x: string) => Math.max(16, Math.round(Number(x) / 40) * 2));
        const bytes = encodeMp4({ width: w, height: h, fps: 2, frames: Number(job.seconds) * 2, frame: () => new Uint8Array(w * h * 3).fill(90) });
        res.writeHead(200, { "content-type": "video/mp4", "content-length": String(bytes.length) });
        res.end(bytes);
        return;
      }
      job.polls++;
      if (job.failure && job.polls >= 1) {
        job.status = "failed";
        job.error = job.failure;
      } else if (job.polls >= fake.videoPolls) {
        job.status = "completed";
        job.progress = 100;
        job.completed_at = Math.floor(Date.now() / 1000);
        job.expires_at = job.completed_at + 3600;
      } else {
        job.status = "in_progress";
        job.progress = Math.round((100 * job.polls) / fake.videoPolls);
      }
      return sendJson(res, 200, publicJob(job), { "openai-poll-after-ms": "10" });
    }
    return sendJson(res, 404, err(`Unknown request URL: ${req.method} ${req.path}`, "unknown_url"));
  }, (status) => err(`fake upstream failure ${status}`, null, null, status >= 500 ? "server_error" : "invalid_request_error"))) as FakeOpenAIMedia;
  fake.baseUrl = `${fake.origin}/v1`;
  fake.videoPolls = 2;
  fake.videosCreated = 0;
  fake.jobs = new Map();
  return fake;
}

function publicJob(job: any) {
  const { polls: _p, failure: _f, ...rest } = job;
  return rest;
}
