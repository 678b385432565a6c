// OpenAI's API takes an optional field set to null as not sent, and its SDKs type most of them nullable (a Python
// caller's `temperature=None` arrives as `"temperature": null`). The chat endpoint accepts those nulls and drops them
// here, after validation, so the plugins and the translators never meet a null where they expect a number or nothing:
// `"max_tokens": null` translated for Anthropic would be refused there.

/** Deletes the body's top-level fields whose value is null. */
export function dropNullFields(body: Record<string, unknown>): void {
  for (const k in body) if (body[k] === null) delete body[k];
}
