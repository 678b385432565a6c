// Audio in a request's conversation. Some models bill audio input above text (pricing.input_audio: Gemini 2.5 Flash
// $1.00 per million against $0.30), and which share of the input will be audio is unknown before the upstream
// answers, so the budget holds such a request's input at the dearer price (worst-case.ts), as it does input it cannot
// see (unbounded-input.ts unseenInput); a request whose input is all in its body, without audio, is never held at it.
import { someConversationPart } from "./media-refs.ts";

const audioMime = (mime: unknown): boolean => typeof mime === "string" && /^\s*audio\//i.test(mime);
/** A data: URL of audio (what the Gemini translators send on as inlineData of its type). */
const audioData = (url: unknown): boolean => typeof url === "string" && /^data:\s*audio\//i.test(url);

/** Whether one content part is audio. */
function isAudio(o: any): boolean {
  // chat: base64 audio (a Gemini upstream is sent it as inlineData audio/<format>).
  if (o.type === "input_audio") return true;
  // chat image_url / file, Responses input_image / input_file carrying audio as a data: URL.
  const image = typeof o.image_url === "string" ? o.image_url : o.image_url?.url;
  if (audioData(image) || audioData(o.file?.file_data) || audioData(o.file_data)) return true;
  // Gemini parts (a snake_case request is renamed before the policies: core/endpoints/gemini/field-names.ts).
  return audioMime(o.inlineData?.mimeType) || audioMime(o.fileData?.mimeType);
}

/** Does the request's conversation carry audio? Stops at the first. */
export const carriesAudio = (body: unknown): boolean => someConversationPart(body, isAudio);
