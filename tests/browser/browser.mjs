// Launches Debian's chromium through playwright-core (never a downloaded browser).
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

export function launch(extraArgs = []) {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      ...extraArgs,
    ],
  });
}

/// A page that records console errors and uncaught exceptions into `errors`.
export async function newPage(browser, opts = {}) {
  const context = await browser.newContext(opts);
  const page = await context.newPage();
  page.errors = [];
  page.on("console", (m) => { if (m.type() === "error") page.errors.push(m.text()); });
  page.on("pageerror", (e) => page.errors.push(String(e)));
  return page;
}

/// Waits until the demo's plots have drawn at least `n` more times than `before`.
export async function paints(page) {
  return page.evaluate(() => window.__alPaints || 0);
}
export async function waitPaints(page, before, n = 1) {
  await page.waitForFunction(([b, k]) => (window.__alPaints || 0) >= b + k, [before, n], { timeout: 10000 });
}

/// The page's address once the app has written its latest state: while controls move it
/// writes at most every quarter second (src/ui/address_bar.rs).
export async function settledUrl(page) {
  await page.waitForFunction(() => !window.__alUrlPending, null, { timeout: 5000 });
  return page.url();
}

/// A browser with a profile on disk (a normal, non-incognito storage quota), for tests that
/// store large files in Cache Storage.
export function launchPersistent(userDataDir, opts = {}) {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    ...opts,
  });
}
