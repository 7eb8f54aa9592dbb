// Launches Debian's chromium through playwright-core (never a downloaded browser).
import fs from "node:fs";
import { chromium } from "playwright-core";
import { startServer } from "./static-server.mjs";

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

/// A page that records console errors, uncaught exceptions and Content-Security-Policy
/// violations (the site's policy is a meta tag: anything it blocks fails the test) into `errors`.
/// The site's service worker is blocked (every request reaches the server, as the tests count
/// and intercept them) unless `opts.serviceWorkers` is "allow" (tests/browser/offline.test.mjs).
export async function newPage(browser, opts = {}) {
  const context = await browser.newContext({ serviceWorkers: "block", ...opts });
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || "inline code"}`));
  });
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
export function launchPersistent(userDataDir, opts = {}, extraArgs = []) {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", ...extraArgs],
    serviceWorkers: "block",
    ...opts,
  });
}

/// The written chapters' slugs, in reading order (chapters/ORDER).
export const WRITTEN = fs.readFileSync(new URL("../../chapters/ORDER", import.meta.url), "utf8")
  .split("\n").filter((l) => l.trim() && !l.startsWith("#"))
  .map((l) => l.split("|").map((s) => s.trim())).filter((p) => p[2] !== "coming").map((p) => p[0]);

/// The built book (dist/) on a plain static server, and a browser: `before(async () =>
/// ({ server, base, browser } = await serveBook()))`, then `after(() => closeBook(...))`.
export async function serveBook() {
  const { server, url } = await startServer(new URL("../../dist", import.meta.url).pathname);
  return { server, base: url, browser: await launch() };
}
export async function closeBook({ server, browser }) {
  await browser?.close();
  server?.close();
}

/// Waits until the page has stopped drawing: no plot drawn for 400 ms (or 8 s in all).
export async function drawn(page) {
  const t0 = Date.now();
  for (let last = -1; ;) {
    const n = await page.evaluate(() => window.__alPaints || 0);
    if (n === last || Date.now() - t0 > 8000) return;
    last = n;
    await page.waitForTimeout(400);
  }
}

/// The GPT-2 demo's status (`data-status` of its view: starting, waiting, loading, ready, failed).
export const gpt2Status = (page) => page.$eval("#gpt2 .gpt2", (g) => g.dataset.status);

/// Waits until the GPT-2 demo has drawn an analysis newer than `after` (its backend chosen, its
/// model ready), and returns that analysis's number.
export async function gpt2Analysed(page, after = 0, timeout = 60000) {
  await page.waitForFunction((a) => {
    const g = document.querySelector("#gpt2 .gpt2");
    return g && g.dataset.status === "ready" && g.dataset.backend !== "pending" && Number(g.dataset.analysis) > a;
  }, after, { timeout });
  return page.$eval("#gpt2 .gpt2", (g) => Number(g.dataset.analysis));
}
