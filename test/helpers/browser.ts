// Headless Chromium for the console's browser test and the bench: Debian's `chromium` package (scripts/test-deps.sh
// installs it; browser downloads fail on these machines), driven by playwright-core. Background networking, component
// updates, sync and QUIC are off, so the browser talks to nothing but the pages it is given (this machine's closed
// network refuses the rest, which Chromium would otherwise retry).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** `timezoneId`: the browser's time zone (an IANA name), else this machine's. */
export async function launchBrowser(viewport = { width: 1400, height: 1000 }, opts: { timezoneId?: string } = {}): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "mg-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    ...(opts.timezoneId ? { timezoneId: opts.timezoneId } : {}),
    timeout: 30_000,
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
    ],
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
