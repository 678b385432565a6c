// A Gemini upstream's grounded answer, as generateContent (one JSON body) or streamGenerateContent (the text in
// 12-character pieces, the last carrying the finish, the grounding and the usage), whichever path was asked.
import type { ServerResponse } from "node:http";

const usageMetadata = { promptTokenCount: 5, candidatesTokenCount: 20, totalTokenCount: 25 };

export function answerGrounded(res: ServerResponse, path: string, text: string, groundingMetadata: unknown): void {
  if (!path.includes("streamGenerateContent")) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, finishReason: "STOP", groundingMetadata }], usageMetadata, modelVersion: "gemini-2.5-flash" }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const pieces = text.match(/.{1,12}/g)!;
  pieces.forEach((piece, i) => {
    const last = i === pieces.length - 1;
    const c = { index: 0, content: { role: "model", parts: [{ text: piece }] }, ...(last ? { finishReason: "STOP", groundingMetadata } : {}) };
    res.write(`data: ${JSON.stringify({ candidates: [c], ...(last ? { usageMetadata } : {}), modelVersion: "gemini-2.5-flash" })}\r\n\r\n`);
  });
  res.end();
}
