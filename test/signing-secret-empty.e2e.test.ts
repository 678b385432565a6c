// server.signing_secret: "${MG_SIGNING_SECRET:-}" with the variable unset is the empty string. Signing with it would
// let anyone compute a link's signature (HMAC with an empty key) and mint or extend links; it counts as unset instead,
// so links are signed with the random per-process secret.
import { afterAll, describe, expect, it } from "vitest";
import { signature } from "../core/assets/sign.ts";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";

describe("an empty server.signing_secret", () => {
  let gw: TestGateway | undefined;
  afterAll(() => gw?.close());

  it("never signs links with an empty key: a link extended and signed with \"\" is refused (404)", async () => {
    gw = await startTestGateway(mediaConfig({ server: { signing_secret: "${MG_SIGNING_SECRET:-}" } }), { env: { MG_SIGNING_SECRET: "" } });
    const r = await postJson(`${gw.baseURL}/images/generations`, { model: "sim/pixel", prompt: "a fox", size: "32x32", response_format: "url" }, auth(LIVE));
    expect(r.status, r.text).toBe(200);
    const link = new URL(r.json.data[0].url);
    expect((await fetch(link)).status).toBe(200);

    const yearLater = Number(link.searchParams.get("expires")) + 365 * 24 * 3600;
    expect(link.searchParams.get("sig")).not.toBe(signature("", link.pathname, Number(link.searchParams.get("expires"))));
    const forged = `${link.origin}${link.pathname}?expires=${yearLater}&sig=${signature("", link.pathname, yearLater)}`;
    expect((await fetch(forged)).status).toBe(404);
  });
});
