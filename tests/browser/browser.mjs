// The browser tests' shared helpers, each written once: Debian's chromium launched through
// playwright-core (never a downloaded browser), the built book on the shared static server
// (static-server.mjs), pages that record their errors, and the waits and reads several test files
// need. They live here rather than in a second module because every test file (and
// scripts/icons.mjs, scripts/thumbs.mjs) already imports this one: one place to look for a helper.
import fs from "node:fs";
import { chromium } from "playwright-core";
import { startServer } from "./static-server.mjs";

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

/// The repository's root and its built site (dist/), as paths ending without a slash.
export const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
export const DIST = `${ROOT}/dist`;

/// The viewport most tests read the book at: a laptop's.
export const DESKTOP = { viewport: { width: 1280, height: 900 } };

const ARGS = [
  "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

/// A headless browser; `extraArgs` add to its flags (`--enable-unsafe-webgpu`: SwiftShader's WebGPU).
export function launch(extraArgs = []) {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...ARGS, ...extraArgs] });
}

/// A browser with a profile on disk (a normal, non-incognito storage quota), for tests that
/// store large files in Cache Storage.
export function launchPersistent(userDataDir, opts = {}, extraArgs = []) {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM, headless: true, args: [...ARGS, ...extraArgs], serviceWorkers: "block", ...opts,
  });
}

/// Records `page`'s uncaught exceptions, and its console errors unless `consoleErrors` is false,
/// into `page.errors` (which it returns): newPage's pages, and others (another tab, a persistent
/// context's page).
export function recordErrors(page, consoleErrors = true) {
  page.errors = [];
  if (consoleErrors) page.on("console", (m) => { if (m.type() === "error") page.errors.push(m.text()); });
  page.on("pageerror", (e) => page.errors.push(String(e)));
  return page.errors;
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
  recordErrors(page);
  return page;
}

/// A new page (newPage's `opts`) at `url`, returned once it is ready: `wait` is a selector to
/// wait for, or a function awaited with the page (a GPT-2 analysis); `init` runs in the page
/// before its own scripts.
export async function openPage(browser, url, opts = {}, { wait = "main", init } = {}) {
  const page = await newPage(browser, opts);
  if (init) await page.addInitScript(init);
  await page.goto(url);
  await (typeof wait === "function" ? wait(page) : page.waitForSelector(wait));
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

/// Every chapter in reading order (chapters/ORDER): its slug, title, and whether it is written
/// (not marked "coming").
export const ORDER = fs.readFileSync(`${ROOT}/chapters/ORDER`, "utf8")
  .split("\n").filter((l) => l.trim() && !l.startsWith("#"))
  .map((l) => {
    const [slug, title, src] = l.split("|").map((s) => s.trim());
    return { slug, title, written: src !== "coming" };
  });
/// The written chapters' slugs, in reading order.
export const WRITTEN = ORDER.filter((c) => c.written).map((c) => c.slug);

/// The built book (dist/) on a plain static server, and a browser: `before(async () =>
/// ({ server, base, browser, open } = await serveBook()))`, then `after(() => closeBook(...))`.
/// `open(path, opts, wait)` is openPage at `base + path`, with `page` as its default page options
/// and `wait` (a selector, or a function awaited with the page: mainDrawn) as its default wait.
export async function serveBook({ page = {}, wait = "main" } = {}) {
  const { server, url: base } = await startServer(DIST);
  const browser = await launch();
  const open = (path, opts = page, sel = wait) => openPage(browser, base + path, opts, { wait: sel });
  return { server, base, browser, open };
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

/// Waits until the page's main element is there and its plots have stopped drawing: a wait for
/// openPage and serveBook's `open`, for tests that read the whole page (axe, print, wide content).
export async function mainDrawn(page) {
  await page.waitForSelector("main");
  await drawn(page);
}

/// Sets the input at `sel` to `value` and sends the input event a reader's typing or drag would.
export const setValue = (page, sel, value) => page.$eval(sel, (e, v) => {
  e.value = v;
  e.dispatchEvent(new Event("input", { bubbles: true }));
}, String(value));

/// The text of the element at `sel`.
export const textOf = (page, sel) => page.$eval(sel, (e) => e.textContent);

/// Waits (up to `timeout` ms) until the text of the element at `sel` matches `re`.
export const untilText = (page, sel, re, timeout = 60000) => page.waitForFunction(
  ([s, r]) => new RegExp(r).test(document.querySelector(s)?.textContent ?? ""), [sel, re.source], { timeout });

/// What the canvas at `sel` shows, as a data URL (to compare two drawings).
export const canvasData = (page, sel) => page.$eval(sel, (c) => c.toDataURL());

/// Clicks the demo's "Download data" and returns the JSON file it saves.
export async function downloadJson(page, demo) {
  const [dl] = await Promise.all([page.waitForEvent("download"), page.click(`#${demo} .download-data`)]);
  return JSON.parse(fs.readFileSync(await dl.path(), "utf8"));
}

/// The GPT-2 demo's status (`data-status` of its view: starting, waiting, loading, ready, failed).
export const gpt2Status = (page) => page.$eval("#gpt2 .gpt2", (g) => g.dataset.status);

/// Waits (up to `timeout` ms) until the GPT-2 demo's status is "ready".
export const gpt2Ready = (page, timeout = 30000) => page.waitForFunction(
  () => document.querySelector("#gpt2 .gpt2")?.dataset.status === "ready", null, { timeout });

/// Waits until the GPT-2 demo has drawn an analysis newer than `after` (its backend chosen, unless
/// `chosen` is false; its model ready), and returns that analysis's number.
export async function gpt2Analysed(page, after = 0, timeout = 60000, chosen = true) {
  await page.waitForFunction(([a, c]) => {
    const g = document.querySelector("#gpt2 .gpt2");
    return g?.dataset.status === "ready" && (!c || g.dataset.backend !== "pending") && Number(g.dataset.analysis) > a;
  }, [after, chosen], { timeout });
  return page.$eval("#gpt2 .gpt2", (g) => Number(g.dataset.analysis));
}

/// The texts of the GPT-2 demo's token chips (of the first prompt, not the comparison's).
export const gpt2ChipTexts = (page) =>
  page.$$eval("#gpt2 .chips:not(.compare .chips) .chip .chip-text", (cs) => cs.map((c) => c.textContent));

/// The GPT-2 demo's backend line ("Running on: …").
export const gpt2BackendLine = (page) => textOf(page, "#gpt2 .backend-status");

/// The GPT-2 demo's generated continuation, apart from the prompt.
export const gpt2Generated = (page) => textOf(page, "#gpt2 .continuation .generated");

/// Clicks the GPT-2 demo's Generate and waits (up to `timeout` ms) until the continuation is done:
/// its "Add to the prompt" shows (and, if `written`, is enabled: some text came). Returns the text.
export async function gpt2Generate(page, timeout = 60000, written = false) {
  await page.click("#gpt2 .generate");
  await page.waitForSelector(`#gpt2 .continuation .append${written ? ":not([disabled])" : ""}`, { timeout });
  return gpt2Generated(page);
}
