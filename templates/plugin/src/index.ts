// __PLUGIN__: a model-gateway plugin. This example masks e-mail addresses in the request before it goes upstream
// (or refuses the request, with `refuse: true`), and says how many it masked in a response header. Replace it with
// yours: the shape (definePlugin, an optionsSchema, handle around next()) stays.
import { definePlugin, GatewayError } from "model-gateway/plugin";

export interface Options {
  /** What each address becomes. */
  replacement: string;
  /** Answer 400 instead of sending a request that holds an address. */
  refuse: boolean;
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

export default definePlugin<Options>({
  name: "__PLUGIN__",
  dependsOn: ["auth"],
  // Checked when gateway.yaml loads (an unknown or mistyped option stops it there, naming the option); the defaults
  // are filled in, so `options` below always has both fields.
  optionsSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      replacement: { type: "string", default: "[email]" },
      refuse: { type: "boolean", default: false },
    },
  },
  async handle(ctx, next, { options }) {
    // ctx.body is the client's request (validated, in its own protocol's shape). What it holds when next() is
    // called is what the provider receives: change it before next(), never after.
    const found = mask(ctx.body, options.replacement);
    ctx.responseHeaders["x-__PLUGIN__-masked"] = String(found); // on every response, errors included
    if (found > 0 && options.refuse) {
      throw new GatewayError(400, "INVALID_REQUEST", `__PLUGIN__: the request holds ${found} e-mail address(es)`);
    }
    await next();
  },
});

/** Replace every address in the strings of `value` (in place); returns how many were replaced. */
export function mask(value: unknown, replacement: string): number {
  let found = 0;
  const visit = (node: unknown): void => {
    if (Array.isArray(node) || (node !== null && typeof node === "object")) {
      const obj = node as Record<string, unknown>;
      for (const key of Object.keys(obj)) {
        const v = obj[key];
        if (typeof v === "string") {
          obj[key] = v.replace(EMAIL, () => {
            found++;
            return replacement;
          });
        } else visit(v);
      }
    }
  };
  visit(value);
  return found;
}
