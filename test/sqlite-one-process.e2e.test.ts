// One serving gateway per SQLite file (core/store/sqlite-process-lock.ts): rate windows and budget holds are kept in
// the serving process, so a second gateway on the same file would double every limit. It is refused at start, naming
// the file, and starts once the first has stopped. (Across processes, and after a SIGKILL: the lock's own test.)
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keyEntry, startTestGateway, testKey } from "./helpers/gateway.ts";

describe("a SQLite store serves one gateway", () => {
  it("a second gateway on the same file is refused, naming it; after the first stops, it starts", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "mg-one-")), "gateway.db");
    const config = { store: { kind: "sqlite", path: db }, projects: { p: { keys: [keyEntry("k", testKey("oneprocess", true))] } } };
    const first = await startTestGateway(config);
    try {
      const refused = await startTestGateway(config).then((gw) => gw.close().then(() => undefined), (err: Error) => err);
      expect(refused?.message).toContain(`store (sqlite): another gateway process is serving ${db}: one process per SQLite file`);
    } finally {
      await first.close();
    }
    const second = await startTestGateway(config);
    await second.close();
  });
});
