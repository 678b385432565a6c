// `--console NAME=open`: the operator console open on a gateway variant for the whole run, as an operator would
// leave it: headless Chromium (test/helpers/browser.ts) signed in with the bench's admin key, one tab on the
// overview and one on the live request tail, each polling the admin API while visible. Counts the admin API calls
// the pages made, so the report says how much polling the run carried.
import { launchBrowser, type TestBrowser } from "../../test/helpers/browser.ts";

export interface OpenConsole {
  /** Admin API requests the pages have made so far. */
  adminCalls(): number;
  close(): Promise<void>;
}

export async function openConsole(origin: string, adminKey: string, views = ["overview", "requests"]): Promise<OpenConsole> {
  let browser: TestBrowser | undefined;
  try {
    browser = await launchBrowser({ width: 1400, height: 900 });
    let calls = 0;
    browser.context.on("request", (r) => {
      if (r.url().startsWith(`${origin}/admin/v1/`)) calls++;
    });
    for (const view of views) {
      const page = await browser.context.newPage();
      await page.goto(`${origin}/console#/${view}`);
      await page.fill('[data-testid="key"]', adminKey);
      await page.click('[data-testid="sign-in-submit"]');
      await page.waitForSelector(`main[data-view="${view}"]`, { timeout: 15_000 });
    }
    const b = browser;
    return { adminCalls: () => calls, close: () => b.close() };
  } catch (err) {
    await browser?.close();
    throw new Error(`--console: could not open the console at ${origin}/console: ${(err as Error).message}`);
  }
}
