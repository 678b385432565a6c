// Usage errors exit 2 whatever the command, naming the word or option that is wrong; failures of the work itself exit 1.
import { describe, expect, it } from "vitest";
import { runCli } from "../test/helpers/cli.ts";

describe("a wrong command word or option value", () => {
  it("start --workers that is no count: exit 2, naming --workers", async () => {
    for (const workers of ["abc", "0"]) {
      const r = await runCli(["start", "--workers", workers, "--port", "0", "--no-watch"]);
      expect(r.stderr).toBe(`model-gateway start: --workers must be a whole number from 1 to 256, or auto (got ${workers})\n`);
      expect(r.status).toBe(2);
    }
  });

  it("plugin with another word than new, or new without one NAME: exit 2, naming it", async () => {
    const list = await runCli(["plugin", "list"]);
    expect(list.stderr).toBe('plugin: unknown subcommand "list"\nusage: model-gateway plugin new NAME [--dir DIR] [--gateway SPEC]\n');
    expect(list.status).toBe(2);
    const none = await runCli(["plugin"]);
    expect(none.stderr).toBe("usage: model-gateway plugin new NAME [--dir DIR] [--gateway SPEC]\n");
    expect(none.status).toBe(2);
    const two = await runCli(["plugin", "new", "a", "b"]);
    expect(two.stderr).toBe("plugin new: give one NAME (the package's name, e.g. redact-email)\n");
    expect(two.status).toBe(2);
  });
});
