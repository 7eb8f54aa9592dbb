// Benchmark: first visit, second visit and offline load of a chapter, in headless Chromium on
// this machine, against the release build in dist/ (served by the tests' static server).
//   - first visit: a fresh profile, nothing cached; navigation -> first demo painted
//     (window.__alFirstPaint, set by the page), then the time until the service worker has
//     kept the whole build and controls the page;
//   - second visit: a new tab in the same profile, answered by the service worker;
//   - offline: the same profile with the browser offline.
// Run: node bench/offline.mjs [ROUNDS]   (after scripts/build.sh; DIST=folder measures another build,
// PAGE=/efficient/ another page). Prints the figures of each
// round and the medians. These are measurements, not pass/fail tests. With SLOW=1 each tab's
// network is throttled to 10 Mbit/s down, 40 ms round trip (Chromium's emulation; the service
// worker's own downloads are not throttled, its answers to the page never touch the network).
import os from "node:os";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";

const ROUNDS = Number(process.argv[2] || 5);
const PATH = process.env.PAGE || "/soft-lookup/";
const { server, url } = await startServer(process.env.DIST || new URL("../dist", import.meta.url).pathname);
const browser = await launch();
console.log(`# ${new Date().toISOString()}, ${os.cpus().length} cores, ${os.cpus()[0].model}, `
  + `Chromium ${browser.version()}${process.env.SLOW === "1" ? ", throttled to 10 Mbit/s, 40 ms" : ""}`);

const SLOW = process.env.SLOW === "1";
async function firstPaint(page) {
  if (SLOW) {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false, latency: 40, downloadThroughput: 10e6 / 8, uploadThroughput: 5e6 / 8,
    });
  }
  await page.goto(url + PATH);
  await page.waitForFunction(() => window.__alFirstPaint !== undefined, null, { timeout: 30000 });
  return page.evaluate(() => window.__alFirstPaint);
}

const rows = [];
for (let r = 0; r < ROUNDS; r++) {
  const first = await newPage(browser, { serviceWorkers: "allow", viewport: { width: 1280, height: 900 } });
  const context = first.context();
  const t0 = Date.now();
  const firstMs = await firstPaint(first);
  await first.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60000 });
  const keptMs = Date.now() - t0;
  const second = await context.newPage();
  const secondMs = await firstPaint(second);
  await context.setOffline(true);
  const offline = await context.newPage();
  const offlineMs = await firstPaint(offline);
  await context.close();
  rows.push({ firstMs, keptMs, secondMs, offlineMs });
  console.log(`round ${r + 1}: first visit ${firstMs.toFixed(0)} ms (whole book kept after ${keptMs} ms), `
    + `second ${secondMs.toFixed(0)} ms, offline ${offlineMs.toFixed(0)} ms`);
}
const median = (k) => rows.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(rows.length / 2)].toFixed(0);
console.log(`median of ${ROUNDS}: first visit ${median("firstMs")} ms, `
  + `whole book kept ${median("keptMs")} ms, second visit ${median("secondMs")} ms, `
  + `offline ${median("offlineMs")} ms (navigation -> first demo painted, ${PATH})`);
await browser.close();
server.close();
