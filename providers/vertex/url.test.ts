import { describe, expect, it } from "vitest";
import { publisherOf, vertexHost, vertexUrl } from "./url.ts";

describe("vertex url", () => {
  it("picks the host from the location: regional, global, multi-region", () => {
    expect(vertexHost("us-central1")).toBe("https://us-central1-aiplatform.googleapis.com");
    expect(vertexHost("global")).toBe("https://aiplatform.googleapis.com");
    expect(vertexHost("eu")).toBe("https://aiplatform.eu.rep.googleapis.com");
  });

  it("builds the publisher path per model family", () => {
    const place = { project: "my-proj", location: "us-east5" };
    expect(vertexUrl(place, { upstreamModel: "claude-sonnet-4-5@20250929" }, "streamRawPredict"))
      .toBe("https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict");
    expect(vertexUrl({ project: "p", location: "global" }, { upstreamModel: "gemini-2.5-flash" }, "streamGenerateContent", "?alt=sse"))
      .toBe("https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  });

  it("base_url replaces the host; a full publisher path in the model id is accepted", () => {
    const place = { baseUrl: "http://127.0.0.1:9/", project: "p", location: "europe-west4" };
    expect(vertexUrl(place, { upstreamModel: "publishers/google/models/gemini-2.5-pro" }, "generateContent"))
      .toBe("http://127.0.0.1:9/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-pro:generateContent");
    expect(vertexUrl({ ...place, baseUrl: "http://h/v1beta1" }, { upstreamModel: "claude-haiku-4-5@20251001" }, "rawPredict"))
      .toBe("http://h/v1beta1/projects/p/locations/europe-west4/publishers/anthropic/models/claude-haiku-4-5@20251001:rawPredict");
    expect(publisherOf("Claude-opus-4-1@20250805")).toBe("anthropic");
    expect(publisherOf("gemini-2.0-flash-001")).toBe("google");
  });
});
