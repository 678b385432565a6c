// A fake Gemini API for embeddings (batchEmbedContents), Imagen (:predict) and Veo (:predictLongRunning with
// operation polling and a key-protected file download), per reference §4.1 and §4.6. Errors use Google's
// {"error":{"code","message","status"}} envelope.
import { encodeMp4 } from "../../providers/sim/mp4.ts";
import { fakeVector, sendJson, startFake, type FakeServer } from "./http-fake.ts";

export const GEMINI_KEY = "AIza-fake-upstream";
const PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

export interface FakeGeminiMedia extends FakeServer {
  baseUrl: string;
  /** Polls before a Veo operation is done. */
  veoPolls: number;
  /** Next Veo operations end with this error. */
  veoError?: { code: number; message: string; status: string };
  operationsStarted: number;
}

const gErr = (code: number, message: string, status: string) => ({ error: { code, message, status } });

export async function startFakeGeminiMedia(): Promise<FakeGeminiMedia> {
  const ops = new Map<string, { polls: number; error?: FakeGeminiMedia["veoError"]; seconds: number; samples: number }>();
  let seq = 0;
  const fake = (await startFake((req, res) => {
    if (!req.path.startsWith("/storage/") && req.headers["x-goog-api-key"] !== GEMINI_KEY) return sendJson(res, 400, gErr(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"));
    const m = /^\/v1beta\/models\/([^:/]+):(\w+)$/.exec(req.path);
    const b = req.body ?? {};
    if (req.method === "POST" && m?.[2] === "batchEmbedContents") {
      const requests: any[] = b.requests ?? [];
      if (requests.length > 100) return sendJson(res, 400, gErr(400, "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch", "INVALID_ARGUMENT"));
      if (requests.some((r) => r.model !== `models/${m[1]}`)) return sendJson(res, 400, gErr(400, "Each request's model must match the batch's model", "INVALID_ARGUMENT"));
      return sendJson(res, 200, { embeddings: requests.map((r) => ({ values: fakeVector(r.content.parts[0].text, r.outputDimensionality ?? 3072, m[1]) })) });
    }
    if (req.method === "POST" && m?.[2] === "predict") {
      const p = b.parameters ?? {};
      const n = p.sampleCount ?? 4;
      if (n < 1 || n > 4) return sendJson(res, 400, gErr(400, "sampleCount must be between 1 and 4", "INVALID_ARGUMENT"));
      if (p.aspectRatio && !["1:1", "3:4", "4:3", "9:16", "16:9"].includes(p.aspectRatio)) return sendJson(res, 400, gErr(400, "Unsupported aspect ratio", "INVALID_ARGUMENT"));
      const prompt: string = b.instances?.[0]?.prompt ?? "";
      if (prompt.includes("forbidden")) return sendJson(res, 200, { predictions: [{ raiFilteredReason: "Your prompt may violate our policies." }] });
      const predictions = Array.from({ length: n }, () => ({
        bytesBase64Encoded: PNG_1x1, mimeType: "image/png", ...(p.enhancePrompt ? { prompt: `${prompt}, cinematic lighting, highly detailed` } : {}),
      }));
      return sendJson(res, 200, { predictions });
    }
    if (req.method === "POST" && m?.[2] === "predictLongRunning") {
      fake.operationsStarted++;
      const name = `models/${m[1]}/operations/op${++seq}`;
      const samples = b.parameters?.sampleCount ?? 1;
      if (samples < 1 || samples > 4) return sendJson(res, 400, gErr(400, "sampleCount must be between 1 and 4", "INVALID_ARGUMENT"));
      ops.set(name, { polls: 0, error: fake.veoError, seconds: b.parameters?.durationSeconds ?? 8, samples });
      return sendJson(res, 200, { name });
    }
    const op = /^\/v1beta\/(models\/[^/]+\/operations\/[^/?]+)$/.exec(req.path);
    if (req.method === "GET" && op) {
      const state = ops.get(op[1]!);
      if (!state) return sendJson(res, 404, gErr(404, "Operation not found", "NOT_FOUND"));
      state.polls++;
      if (state.polls < fake.veoPolls) return sendJson(res, 200, { name: op[1] });
      if (state.error) return sendJson(res, 200, { name: op[1], done: true, error: state.error });
      return sendJson(res, 200, {
        name: op[1], done: true,
        response: {
          "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse",
          // One generated sample per sampleCount, each billed by Google for its durationSeconds.
          generateVideoResponse: { generatedSamples: Array.from({ length: state.samples }, (_, i) => ({ video: { uri: `${fake.origin}/v1beta/files/${op[1]!.split("/").pop()}-${i}:download?alt=media` } })) },
        },
      });
    }
    if (req.method === "GET" && req.path.startsWith("/v1beta/files/")) {
      // Like Google's file download: a redirect to a signed storage URL (which must not get the API key).
      res.writeHead(302, { location: `/storage/${req.path.split("/").pop()}&signature=fake` });
      res.end();
      return;
    }
    if (req.method === "GET" && req.path.startsWith("/storage/")) {
      const bytes = encodeMp4({ width: 32, height: 18, fps: 2, frames: 4, frame: () => new Uint8Array(32 * 18 * 3).fill(120) });
      res.writeHead(200, { "content-type": "video/mp4" });
      res.end(bytes);
      return;
    }
    return sendJson(res, 404, gErr(404, `no route ${req.path}`, "NOT_FOUND"));
  }, (status) => gErr(status, `fake gemini failure ${status}`, status === 429 ? "RESOURCE_EXHAUSTED" : "INTERNAL"))) as FakeGeminiMedia;
  fake.baseUrl = fake.origin;
  fake.veoPolls = 2;
  fake.operationsStarted = 0;
  return fake;
}
