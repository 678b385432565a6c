// Base64 from an upstream, decoded only when it is base64: Buffer.from(s, "base64") skips what it cannot read, so
// "!!!notbase64!!!" would become a few bytes of garbage, served as an image or a vector and billed.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The bytes, or undefined when `text` is empty or not standard (or URL-safe, unpadded) base64. */
export function decodeBase64Strict(text: string): Buffer | undefined {
  if (!text || text.length % 4 === 1) return undefined;
  if (!BASE64.test(text) && !BASE64URL.test(text)) return undefined;
  return Buffer.from(text, "base64");
}
