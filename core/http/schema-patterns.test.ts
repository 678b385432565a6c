// Request validation must cost time linear in the body and never throw. V8's regex engine keeps a stack frame per
// repetition of a group: `(?:;[^,;]+)*` against a data: URL with 4 million parameters, or `(?:\.[a-z]+)*` against
// a host of 4 million labels, threw RangeError (a 500) — so no schema pattern may repeat a group without a bound.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateChatCompletions, validateImages, validateMessages, validateVideos } from "../generated/validators.js";
import { validationError } from "./validate.ts";

const SCHEMAS = new URL("../../schemas/", import.meta.url).pathname;

function patterns(): { file: string; pattern: string }[] {
  const out: { file: string; pattern: string }[] = [];
  const walk = (node: unknown, file: string) => {
    if (Array.isArray(node)) for (const v of node) walk(v, file);
    else if (node && typeof node === "object") {
      for (const [k, v] of Object.entries(node)) {
        if (k === "pattern" && typeof v === "string") out.push({ file, pattern: v });
        else walk(v, file);
      }
    }
  };
  for (const dir of [".", "api", "responses"]) {
    for (const name of readdirSync(join(SCHEMAS, dir)).filter((n) => n.endsWith(".schema.json"))) {
      walk(JSON.parse(readFileSync(join(SCHEMAS, dir, name), "utf8")), `${dir}/${name}`);
    }
  }
  return out;
}

describe("schema patterns", () => {
  it("repeat no group without a bound (`(…)*`, `(…)+`, `(…){n,}`)", () => {
    const all = patterns();
    expect(all.length).toBeGreaterThan(10);
    // Escapes and character classes first: `[()*+]` repeats nothing.
    const structure = (p: string) => p.replace(/\\./g, "e").replace(/\[[^\]]*\]/g, "c");
    const unbounded = all.filter(({ pattern }) => /\)(?:[*+]|\{\d+,\})/.test(structure(pattern)));
    expect(unbounded).toEqual([]);
  });

  const M = 8_000_000;
  const hostile: [string, string][] = [
    ["an https URL with 4 million host labels", `https://a${".a".repeat(M / 2)}`],
    ["a data: URL with 4 million parameters", `data:image/png${";a".repeat(M / 2)};base64,AAAA`],
    ["an https URL with an 8 MB path", `https://example.com/${"x".repeat(M)}`],
  ];
  it.each(hostile)("8 MB in a URL field (%s): refused with the field named, not thrown", (_name, url) => {
    for (const [validate, body, field] of [
      [validateImages, { model: "m", prompt: "p", reference_image: url }, "reference_image"],
      [validateVideos, { model: "m", prompt: "p", image_url: url }, "image_url"],
      [validateChatCompletions, { model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }] }, "messages[0].content[0].image_url.url"],
      [validateMessages, { model: "m", max_tokens: 1, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url } }] }] }, "messages[0].content[0].source.url"],
    ] as const) {
      expect(validate(body), field).toBe(false);
      expect(validationError(validate, "BAD_REQUEST").details).toMatchObject({ field });
    }
  });
});
