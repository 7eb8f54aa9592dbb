// The vision demo's model in headless Chromium on this machine, against the release build in
// dist/: the bundled six-shapes ViT, and a random-init model of DeiT-tiny's shape (F32, about
// 23 MB, written by tests/browser/long/vision.test.mjs into /tmp and served from 127.0.0.1 as
// the folder of the demo's "DeiT-tiny" entry), on the CPU (one thread, as the peer's run):
//   - load: navigation (bundled) or the Download click (DeiT-tiny's shape) to the model ready;
//   - a picture to its maps: the worker's time for the whole picture (preprocessing, the pass
//     with every attention) and the page's, from choosing another picture to the maps drawn,
//     median of 5;
//   - peak memory: the largest VmHWM of Chromium's renderer processes (the page and its worker).
// Run: node bench/vision.mjs   (after scripts/build.sh and the long vision test once). Prints a
// table and writes bench/out/vision.json. Measurements, not pass/fail tests.
import fs from "node:fs";
import os from "node:os";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";
import { rendererPeakMb } from "./memory.mjs";

const root = new URL("..", import.meta.url).pathname;
const models = "/tmp/attention-live-test-vit";
if (!fs.existsSync(`${models}/random-deit-tiny/model.safetensors`)) {
  throw new Error("run `node --test tests/browser/long/vision.test.mjs` once: it writes DeiT-tiny's shape");
}
const { server, url } = await startServer(process.env.BENCH_DIST || `${root}dist`, 0);
const hub = await startServer(models, 0, { cors: true });
const results = { date: new Date().toISOString(), machine: `${os.cpus().length} cores, ${os.cpus()[0].model}`, models: {} };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Chooses `picture` and waits for its answer and the frame after it: (worker ms, page ms).
const show = (page, picture) => page.evaluate((p) => new Promise((resolve) => {
  const el = document.querySelector("#vision .vision");
  const before = Number(el.dataset.id);
  const select = document.querySelector("#vision-picture");
  const t0 = performance.now();
  select.value = p; select.dispatchEvent(new Event("change", { bubbles: true }));
  const wait = () => {
    if (Number(el.dataset.id) > before) {
      requestAnimationFrame(() => requestAnimationFrame(() =>
        resolve([Number(el.dataset.computeMs), performance.now() - t0])));
    } else requestAnimationFrame(wait);
  };
  wait();
}), picture);

for (const [name, query, download] of [
  ["six shapes (bundled, 0.14 M parameters, F16, 32 × 32)", "?vision.backend=cpu", false],
  ["DeiT-tiny shape (5.7 M parameters, F32, 224 × 224)",
    `?vision.backend=cpu&vision.model=deit-tiny&vision.base=${encodeURIComponent(`${hub.url}/random-deit-tiny/`)}`, true],
]) {
  const browser = await launch();
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  const t0 = Date.now();
  await page.goto(`${url}/images/${query}#vision`);
  if (download) {
    await page.waitForSelector("#vision button.download", { timeout: 60000 });
    await page.click("#vision button.download");
  }
  await page.waitForFunction(() => document.querySelector("#vision .vision-status")?.dataset.status === "ready", null, { timeout: 600000 });
  const load_ms = Date.now() - t0;
  await page.waitForFunction(() => Number(document.querySelector("#vision .vision")?.dataset.id) > 0, null, { timeout: 600000 });
  const runs = [];
  for (let i = 0; i < 5; i++) {
    await show(page, "circle");
    runs.push(await show(page, "star"));
  }
  results.models[name] = {
    load_ms, worker_ms: Math.round(median(runs.map((r) => r[0]))), page_ms: Math.round(median(runs.map((r) => r[1]))),
    renderer_peak_mb: rendererPeakMb(),
  };
  await browser.close();
}
server.close(); hub.server.close();
fs.mkdirSync(`${root}bench/out`, { recursive: true });
fs.writeFileSync(`${root}bench/out/vision.json`, JSON.stringify(results, null, 1));
console.log(`${results.machine}, ${results.date}`);
console.log("| model | load | a picture: worker | to the maps drawn | renderer peak |");
console.log("|---|---|---|---|---|");
for (const [name, r] of Object.entries(results.models)) {
  console.log(`| ${name} | ${r.load_ms} ms | ${r.worker_ms} ms | ${r.page_ms} ms | ${r.renderer_peak_mb} MB |`);
}
