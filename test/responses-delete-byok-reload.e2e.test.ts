// DELETE /v1/responses/{id} of a response served natively, after a reload changed whose key the project has for its
// provider: the delete goes with the credentials that made the response, never another account's. A response made
// with the project's own key, that key since removed, used to be deleted upstream with the gateway's key (the
// gateway's account holds no such copy: 404), its record dropped, nothing logged, the project's copy left.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import OpenAI from "openai";
import { startFakeOpenAI } from "./upstreams/openai.ts";
import { serveResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway } from "./helpers/log-capture.ts";

const BYOK = testKey("respdelbyok");
const LATER = testKey("respdellater");
const PROJECT_KEY = "sk-project-own-oai";
let up: FakeOpenAIWithResponses;
/** Each request's method and Authorization as the upstream got them. */
const seen: string[] = [];
let started: Awaited<ReturnType<typeof startLoggedGateway>>;

const configWith = (keys: { byokp?: string; later?: string }) => ({
  store: { kind: "sqlite", path: "./gateway.db" },
  providers: { fakeoai: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" } },
  models: { "acme/native": { type: "language", endpoints: [{ provider: "fakeoai", model: "gpt-4o-mini", native_responses: true, pricing: { input: "0.000001", output: "0.000002" } }] } },
  projects: {
    byokp: { keys: [keyEntry("k", BYOK)], ...(keys.byokp ? { providers: { fakeoai: { api_key: keys.byokp } } } : {}) },
    later: { keys: [keyEntry("k", LATER)], ...(keys.later ? { providers: { fakeoai: { api_key: keys.later } } } : {}) },
  },
});

beforeAll(async () => {
  const fake = await startFakeOpenAI();
  fake.hook = (req) => {
    const auth = String(req.headers.authorization);
    seen.push(`${req.method} ${auth}`);
    if (auth === `Bearer ${PROJECT_KEY}`) req.headers.authorization = "Bearer sk-fake-upstream"; // the fake knows one key
    return false;
  };
  up = Object.assign(fake, { responses: serveResponses(fake) });
  started = await startLoggedGateway(configWith({ byokp: PROJECT_KEY }));
});

afterAll(async () => {
  await started?.gw.close();
  await up?.close();
});

const clientOf = (key: string) => new OpenAI({ apiKey: key, baseURL: started.baseURL, maxRetries: 0 });
const deletes = () => seen.filter((s) => s.startsWith("DELETE"));

describe("DELETE of a native response after a reload changed the project's own key", () => {
  it("made with the project's own key, since removed: the gateway's record goes, a warning, nothing sent with the gateway's key", async () => {
    const byokp = clientOf(BYOK);
    const later = clientOf(LATER);
    const mine = await byokp.responses.create({ model: "acme/native", input: "Something private" });
    expect(seen.at(-1)).toBe(`POST Bearer ${PROJECT_KEY}`);
    const ours = await later.responses.create({ model: "acme/native", input: "Something private" });
    expect(seen.at(-1)).toBe("POST Bearer sk-fake-upstream");

    // byokp's key removed; later gets one of its own.
    writeFileSync(join(started.dir, "gateway.yaml"), YAML.stringify(configWith({ later: PROJECT_KEY })));
    expect(await started.gw.gateway.reload()).toMatchObject({ ok: true });

    const before = deletes().length;
    const res = await fetch(`${started.baseURL}/responses/${mine.id}`, { method: "DELETE", headers: { authorization: `Bearer ${BYOK}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: mine.id, object: "response.deleted", deleted: true });
    expect(deletes().slice(before)).toEqual([]); // never to the gateway's account
    expect(up.responses.stored.has(mine.id)).toBe(true); // the project's copy: out of reach, as the warning says
    expect(await byokp.responses.retrieve(mine.id).catch((e) => e.status)).toBe(404);
    const warning = started.log.records().find((r) => r.level === 40 && r.response === mine.id);
    expect(warning).toMatchObject({ provider: "fakeoai", msg: expect.stringContaining("made with the project's own key for its provider, which the project no longer has") });

    // Made with the gateway's key: deleted with it, though the project has a key of its own now.
    await later.responses.delete(ours.id);
    expect(deletes().slice(before)).toEqual(["DELETE Bearer sk-fake-upstream"]);
    expect(up.responses.stored.has(ours.id)).toBe(false);
  });
});
