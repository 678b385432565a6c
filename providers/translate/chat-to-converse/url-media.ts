// Bedrock Converse fetches no URLs: an image or document block takes bytes only (protocols-2 §2.2). So a client's
// image or PDF URL is downloaded by the gateway, as for Gemini and Claude on Bedrock (chat-to-gemini/media-urls.ts:
// the client-URL guard, server.url_fetch's bounds, once per client request), and sent as Converse's bytes block.
// The URL's bytes decide the block: a PDF is a document (named as the data: URL ones are), an image an image.
import type { UrlFetchOptions } from "../../../core/net/url-fetch.ts";
import { inlineUrls, type InlineFor, type PendingUrl } from "../chat-to-gemini/media-urls.ts";
import type { Block } from "./cache-points.ts";

export const IMAGE_FORMATS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp" };

const CONVERSE: InlineFor = { upstream: "Bedrock", types: ["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"], what: "an image (png, jpeg, gif, webp) or a PDF" };

/** The URL parts of one translated request: each a block sent once its URL is downloaded. */
export class ConverseUrls {
  readonly pending: PendingUrl[] = [];
  /** Document names after the data: URL ones (Converse wants them unique): set per download, so each attempt alike. */
  private names = { base: 0, n: 0 };

  /** A block standing for `url` (the client's `field`) until download() fills it in place (cache points keep it). */
  block(url: string, field: string): Block {
    const block: Block = { image: { format: "png", source: { bytes: "" } } };
    this.pending.push({
      part: block, url, field,
      inline: (mimeType, data) => {
        delete block.image;
        if (mimeType === "application/pdf") block.document = { format: "pdf", name: `document-${++this.names.n}`, source: { bytes: data } };
        else block.image = { format: IMAGE_FORMATS[mimeType]!, source: { bytes: data } };
      },
    });
    return block;
  }

  /** `docs` documents were named before these (document-1 … document-docs). */
  after(docs: number): void {
    this.names.base = docs;
  }

  async download(policy: UrlFetchOptions, signal: AbortSignal): Promise<void> {
    this.names.n = this.names.base;
    await inlineUrls(this.pending, policy, signal, CONVERSE);
  }
}
