// Runs the plugin in a real gateway (model-gateway/testing: gateway.yaml, the built-in plugins, the simulator as the
// upstream), the way a deployment runs it. The simulator's reply quotes the last user message it received.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startTestGateway, type TestGateway } from "model-gateway/testing";

const module = new URL("../src/index.js", import.meta.url); // the compiled plugin, beside this compiled test
const ask = (gw: TestGateway, content: string) => gw.post("/chat/completions", { model: gw.model, messages: [{ role: "user", content }] });

describe("__PLUGIN__", () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ plugins: { "__PLUGIN__": { module } } });
  });
  after(() => gw?.close());

  it("masks e-mail addresses before the request goes upstream", async () => {
    const r = await ask(gw, "Write to ada@example.com about the invoice");
    assert.equal(r.status, 200, r.text);
    const reply: string = r.body.choices[0].message.content;
    assert.match(reply, /Write to \[email\] about the invoice/);
    assert.doesNotMatch(reply, /ada@example\.com/);
    assert.equal(r.headers.get("x-__PLUGIN__-masked"), "1");
  });

  it("leaves a request without an address as it is", async () => {
    const r = await ask(gw, "No address here");
    assert.equal(r.status, 200, r.text);
    assert.match(r.body.choices[0].message.content, /No address here/);
    assert.equal(r.headers.get("x-__PLUGIN__-masked"), "0");
  });

  it("refuses the request instead with refuse: true, in the gateway's error envelope", async () => {
    const strict = await startTestGateway({ plugins: { "__PLUGIN__": { module, options: { refuse: true } } } });
    try {
      const r = await ask(strict, "Write to ada@example.com");
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, "INVALID_REQUEST");
      assert.match(r.body.error.message, /1 e-mail address/);
    } finally {
      await strict.close();
    }
  });

  it("stops the gateway on an unknown option, naming it", async () => {
    await assert.rejects(
      startTestGateway({ plugins: { "__PLUGIN__": { module, options: { replacment: "***" } } } }),
      /plugin __PLUGIN__ options: unknown option "replacment"/,
    );
  });
});
