// Every core: once the service worker controls the page it adds the cross-origin isolation
// headers, the page starts the threaded build of the compute worker (scripts/build_threads.sh),
// its kernels split their work across a pool of Web Workers, the backend line says how many,
// and GPT-2's outputs are those of the same build on one thread. Without isolation (service
// workers blocked, as in every other browser test: a first visit) the same build runs on one
// thread and says why; where it cannot start, the single-threaded build takes over.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import {
  newPage, serveBook, closeBook, gpt2Analysed as analysed, gpt2BackendLine as line, gpt2Generate,
} from "./browser.mjs";

let server, base, browser;
before(async () => ({ server, base, browser } = await serveBook()));
after(() => closeBook({ server, browser }));

/// What the chapter shows of one forward pass: each token's attention weight in the selected
/// head and the ten next-token probabilities; then a greedy continuation.
async function outputs(page) {
  await analysed(page);
  const weights = await page.$$eval("#gpt2 .chip", (cs) => cs.map((c) => c.style.getPropertyValue("--w")));
  const probs = await page.$$eval("#gpt2 .next-list:not(.short) li", (rs) => rs.map((r) => r.textContent));
  const generated = await gpt2Generate(page);
  assert.ok(generated.length > 10, generated);
  return { weights, probs, generated };
}

const ADDRESS = "/gpt2-live/?gpt2.backend=cpu&gpt2.temperature=0";

test("isolated by the service worker, GPT-2 runs on every core and gives the one-thread outputs", async () => {
  // No service worker, so no isolation (a first visit): the threaded build, on one thread.
  const first = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await first.goto(base + ADDRESS);
  await analysed(first);
  assert.equal(await first.evaluate(() => crossOriginIsolated), false);
  assert.match(await line(first), /CPU \(chosen in the page; 1 thread: the page is not cross-origin isolated\)/);
  const firstVisit = await outputs(first);
  assert.deepEqual(first.errors, []);
  await first.context().close();

  // A threaded build that cannot start (here: its loader missing): the single-threaded build.
  const plain = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await plain.route("**/gpt2-worker-mt_loader.js", (r) => r.fulfill({ status: 404, body: "not here" }));
  await plain.goto(base + ADDRESS);
  await analysed(plain);
  assert.match(await line(plain), /CPU \(chosen in the page; 1 thread\)/);
  const single = await outputs(plain);
  await plain.context().close();

  // The first visit installs the service worker; from the next load on the page is isolated and
  // runs the threaded build (with relaxed SIMD's fused multiply-adds, which Chromium has).
  const page = await newPage(browser, { serviceWorkers: "allow", viewport: { width: 1280, height: 900 } });
  await page.goto(base + ADDRESS);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60000 });
  // The same build capped at one thread first (the benchmarks' hook), then on every core.
  await page.evaluate(() => localStorage.setItem("attention-live:threads", "1"));
  await page.goto(base + ADDRESS);
  assert.equal(await page.evaluate(() => crossOriginIsolated), true, "isolated once the service worker answers");
  await analysed(page);
  assert.match(await line(page), /CPU \(chosen in the page; 1 thread: capped by this browser's storage/);
  const one = await outputs(page);
  await page.evaluate(() => localStorage.removeItem("attention-live:threads"));
  await page.goto(base + ADDRESS);
  await analysed(page);
  const want = Math.min(await page.evaluate(() => navigator.hardwareConcurrency), 8);
  assert.equal(want, Math.min(os.availableParallelism(), 8), "the browser reports this machine's cores");
  if (want > 1) {
    assert.match(await line(page), new RegExp(`CPU \\(chosen in the page; ${want} threads\\)`));
  } else {
    assert.match(await line(page), /CPU \(chosen in the page; 1 thread: this machine reports one core/);
  }
  assert.deepEqual(await outputs(page), one, "the same weights, probabilities and greedy text as one thread");
  assert.deepEqual(firstVisit, one, "the first visit's outputs are those of the same build, isolated");
  // Fused multiply-adds round once where the single-threaded build rounds twice: the same greedy text.
  assert.equal(one.generated, single.generated);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
