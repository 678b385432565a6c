// /api/openapi.json against the running gateway's answers to a method a path does not serve: every such 405 (with
// its error envelope) is documented as an operation of that path, and the document promises no 405 the gateway
// does not give.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import { mediaConfig } from "./helpers/media.ts";

const KEY = testKey("openapi405", true);
const ADMIN = "mg_admin_openapi405_key_for_tests_01";
const METHODS = ["get", "post", "put", "patch", "delete"] as const;
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ ...mediaConfig(), admin_keys: [{ id: "ops", sha256: sha256Hex(ADMIN), scope: "write" }], projects: { p: { keys: [keyEntry("k", KEY)] } } });
});
afterAll(async () => {
  await gw?.close();
});

describe("405 in /api/openapi.json", () => {
  it("documents every 405 the gateway answers, with the ErrorEnvelope it sends, and no 405 it does not", async () => {
    const doc = await (await fetch(`${gw.url}/api/openapi.json`)).json();
    const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true });
    (addFormats as any)(ajv);
    ajv.addSchema({ ...doc, $id: "openapi.json" });
    const documented405: string[] = [];
    for (const [template, item] of Object.entries<any>(doc.paths)) {
      const root = item.servers ? "" : "/api";
      // A Gemini route's {model} is a creator/slug id; every other parameter one segment.
      const path = (template.startsWith("/v1beta/") ? template.replace("{model}", "acme/some-model") : template).replace(/\{[^}]+\}/g, "x");
      for (const m of METHODS) {
        const op = item[m];
        if (op && !op.responses["405"]) continue; // served: not probed here
        // No key where the document says a 405 needs none (security: []); the admin key where it names adminKey.
        const needsKey = op?.security?.length > 0;
        const send = (auth: boolean) =>
          fetch(`${gw.url}${root}${path}`, {
            method: m.toUpperCase(),
            headers: { ...(m === "get" ? {} : { "content-type": "application/json" }), ...(auth ? { authorization: `Bearer ${ADMIN}` } : {}) },
            body: m === "get" ? undefined : "{}",
          });
        // Without an admin key every /admin/v1 path is the admin API's 401, so its 405s are documented as needing one.
        if (op && template.startsWith("/admin/")) expect(op.security, `${m.toUpperCase()} ${template}`).toEqual([{ adminKey: [] }]);
        if (needsKey) expect((await send(false)).status, `${m.toUpperCase()} ${template} without the admin key`).toBe(401);
        const res = await send(needsKey || template.startsWith("/admin/"));
        const body = await res.text();
        const what = `${m.toUpperCase()} ${template}`;
        if (!op) {
          expect(res.status, `${what} answers 405 but the document has no such operation`).not.toBe(405);
          continue;
        }
        documented405.push(what);
        expect(res.status, what).toBe(405);
        expect(res.headers.get("allow"), what).toBeTruthy();
        // The document names the methods the Allow header lists (HEAD with every GET), in whatever order.
        const methods = (list: string) => list.split(", ").sort();
        expect(op.summary, what).toMatch(new RegExp(`^Not served: ${template.replace(/[{}.]/g, "\\$&")} takes `));
        expect(methods(op.summary.slice(op.summary.indexOf(" takes ") + 7)), what).toEqual(methods(res.headers.get("allow")!));
        const pointer = `#/paths/${template.replace(/~/g, "~0").replace(/\//g, "~1")}/${m}/responses/405/content/application~1json/schema`;
        const validate = ajv.getSchema(`openapi.json${pointer}`);
        expect(validate(JSON.parse(body)), `${what}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
    // The audit's two: GET on a POST endpoint, POST on the model list.
    expect(documented405).toEqual(expect.arrayContaining(["GET /v1/embeddings", "POST /v1/models", "GET /v1/chat/completions", "PUT /mcp"]));
    // And on paths with parameters: a stored response, a model, a Gemini model's methods.
    expect(documented405).toEqual(expect.arrayContaining(["PUT /v1/responses/{id}", "POST /v1/models/{creator}/{model}", "DELETE /v1beta/models/{model}:generateContent"]));
  });
});
