// Loading a GPT-2 checkpoint from elsewhere: a random-init GPT-2 small (124M, written by
// `cargo run --example write_random_gpt2`, never committed) served from another 127.0.0.1
// port stands in for the hub. Checks the consent step, progress, refusal of a file that is not
// the pinned one, caching in Cache Storage, cancel, and local files.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { execFileSync } from "node:child_process";
import { startServer } from "../static-server.mjs";
import {
  launchPersistent, newPage, settledUrl, serveBook, closeBook, recordErrors, setValue, ROOT,
  gpt2Status as status, gpt2Ready, gpt2Analysed, gpt2Generated,
} from "../browser.mjs";

const models = "/tmp/attention-live-test-models";
let server, base, hub, browser;
const requests = [];

before(async () => {
  if (!fs.existsSync(`${models}/random-124m/model.safetensors`)) {
    execFileSync("cargo", ["run", "--quiet", "--example", "write_random_gpt2", "--", `${models}/random-124m`],
      { cwd: ROOT, stdio: "inherit" });
  }
  ({ server, base, browser } = await serveBook());
  hub = await startServer(models, 0, { cors: true, onRequest: (p) => requests.push(p) });
});
after(async () => { await closeBook({ server, browser }); hub?.server.close(); });


test("a file that is not the pinned GPT-2 is refused with the reason", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/gpt2-live/?gpt2.model=gpt2&gpt2.base=${encodeURIComponent(hub.url + "/random-124m/")}`);
  await page.waitForSelector("#gpt2 .download-model");
  assert.match(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /548\.1 MB/);
  await page.click("#gpt2 .download-model");
  await page.waitForSelector("#gpt2 .gpt2[data-status=failed]", { timeout: 30000 });
  const msg = await page.$eval("#gpt2 .notice.error", (e) => e.textContent);
  // The random config.json is not the pinned one either: refused before the weights are fetched.
  assert.match(msg, /pinned config\.json is 665 bytes|pinned file is 665 bytes/);
  assert.ok(!requests.includes("/random-124m/model.safetensors"), "the weights were never downloaded");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("a checkpoint from a URL: consent, progress, a 124M model running, then loaded from the cache", async () => {
  // A profile on disk: incognito contexts have too small a storage quota for 500 MB.
  const profile = fs.mkdtempSync("/tmp/attention-live-profile-");
  const context = await launchPersistent(profile, { viewport: { width: 1280, height: 900 } });
  const page = context.pages()[0] || await context.newPage();
  const errors = recordErrors(page, false);
  const link = `${base}/gpt2-live/?gpt2.model=url&gpt2.base=${encodeURIComponent(hub.url + "/random-124m/")}&gpt2.prompt=Hello%20world`;
  await page.goto(link);
  await page.waitForSelector("#gpt2 .download-model");
  const t0 = Date.now();
  await page.click("#gpt2 .download-model");
  // The progress bar shows bytes, percent and a rate while downloading.
  await page.waitForFunction(() => /Downloading .*MB of 497\.8 MB \(\d+%\)/.test(document.querySelector("#gpt2 .model-status")?.textContent || ""), null, { timeout: 30000 });
  await gpt2Analysed(page, 0, 120000, false);
  console.log(`# random 124M: downloaded, parsed and first analysis in ${Date.now() - t0} ms`);
  assert.match(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /12 layers × 12 heads, 124\.44 M parameters, window 1024.*A copy is kept in this browser/);
  assert.deepEqual(await page.$$eval("#gpt2 .chip small", (s) => s.map((x) => Number(x.textContent))), [15496, 995]);
  // Generation on the 124M model (about 15 tokens/s here) can be stopped after a token or two.
  const prompt0 = await page.$eval("#gpt2 textarea", (t) => t.value);
  await page.click("#gpt2 .generate");
  await page.waitForFunction(() => document.querySelector("#gpt2 .continuation .generated")?.textContent, null, { timeout: 30000 });
  await page.click("#gpt2 .stop");
  await page.waitForFunction(() => !document.querySelector("#gpt2 .generate").disabled && !document.querySelector("#gpt2 .stop"), null, { timeout: 10000 });
  const stopped = await gpt2Generated(page);
  await page.waitForTimeout(1500);
  assert.equal(await gpt2Generated(page), stopped, "nothing more arrives after Stop");
  assert.match(await page.$eval("#gpt2 .continuation [role=status]", (e) => e.textContent), /^Stopped after \d+ tokens?\.$/);
  assert.equal(await page.$eval("#gpt2 textarea", (t) => t.value), prompt0, "the prompt is the reader's");
  const generated = await page.$eval("#gpt2 .gpt2", (g) => Number(g.dataset.generateMs));
  assert.ok(generated > 0 && generated < 20 / 15 * 1000 * 3, `stopped after ${generated} ms`);
  // A long prompt (12 × 12 × 300² weights, over the worker's limit): the selected layer comes in
  // full and every other layer as a thumbnail, so the whole model view is still drawn.
  const before = await page.$eval("#gpt2 .gpt2", (g) => Number(g.dataset.analysis));
  await setValue(page, "#gpt2 textarea", "one two three four five six seven eight nine ten ".repeat(30));
  const t1 = Date.now();
  await page.waitForFunction((b) => Number(document.querySelector("#gpt2 .gpt2").dataset.analysis) > b, before, { timeout: 120000 });
  console.log(`# random 124M, ${await page.$$eval("#gpt2 .chip", (c) => c.length)}-token prompt analysed in ${Date.now() - t1} ms`);
  assert.ok((await page.$$eval("#gpt2 .chip", (c) => c.length)) >= 300);
  const colours = await page.$eval("#gpt2 .model-view", (c) => {
    // The thumbnail of layer 7, head 4 (layer 0 is the one sent in full): its middle row of pixels.
    const cell = Math.min(96, Math.max(24, (c.width - 26) / 12));
    const x = 26 + 4 * cell + 2, y = 26 + 7 * cell + 2 + (cell - 4) / 2;
    const d = c.getContext("2d").getImageData(x, y, cell - 4, 1).data;
    return new Set(Array.from({ length: d.length / 4 }, (_, i) => `${d[4 * i]},${d[4 * i + 1]},${d[4 * i + 2]}`)).size;
  });
  assert.ok(colours > 2, `layer 7's thumbnail is drawn (${colours} colours in a row)`);
  const downloads = requests.filter((p) => p.endsWith("model.safetensors")).length;
  // A second visit loads from Cache Storage, without the network and without asking.
  await page.reload();
  await gpt2Ready(page, 120000);
  assert.match(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /Loaded from this browser's storage/);
  assert.equal(requests.filter((p) => p.endsWith("model.safetensors")).length, downloads, "no second download");
  assert.deepEqual(errors, []);
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
});

test("a download can be cancelled, and the page keeps working", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  // Throttle the model file so there is time to cancel.
  await page.route("**/random-124m/model.safetensors", async (r) => { await new Promise((res) => setTimeout(res, 3000)); r.continue(); });
  await page.goto(`${base}/gpt2-live/?gpt2.model=url&gpt2.base=${encodeURIComponent(hub.url + "/random-124m/")}`);
  await page.waitForSelector("#gpt2 .download-model");
  await page.click("#gpt2 .download-model");
  await page.click("#gpt2 .cancel");
  await page.waitForSelector("#gpt2 .gpt2[data-status=failed]");
  assert.match(await page.$eval("#gpt2 .notice.error", (e) => e.textContent), /cancelled/);
  await page.selectOption("#gpt2 select", "induction");
  await gpt2Ready(page);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("local files load from the picker; a link to them asks for the files again", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/gpt2-live/`);
  await gpt2Ready(page);
  // The picker shows for the model "local files" only.
  assert.equal(await page.$("#gpt2 input[type=file]"), null);
  await page.selectOption("#gpt2-model", "file");
  const induction = `${ROOT}/static/models/induction`;
  await page.setInputFiles("#gpt2 input[type=file]", [`${induction}/config.json`, `${induction}/model.safetensors`]);
  await page.waitForFunction(() => /Loaded from local files/.test(document.querySelector("#gpt2 .model-status")?.textContent || ""), null, { timeout: 30000 });
  assert.match(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /2 layers × 4 heads/);
  assert.equal(new URL(await settledUrl(page)).searchParams.get("gpt2.model"), "file");
  // A mismatched pair is refused with the reason, in place.
  await page.setInputFiles("#gpt2 input[type=file]",
    [`${ROOT}/static/models/stories/config.json`, `${induction}/model.safetensors`]);
  await page.waitForSelector("#gpt2 .gpt2[data-status=failed]");
  assert.match(await page.$eval("#gpt2 .notice.error", (e) => e.textContent), /shape \[50257, 64\], but the config needs \[50257, 128\]/);
  await page.reload();
  await page.waitForSelector("#gpt2 .gpt2[data-status=waiting]");
  assert.match(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /Pick or drop a config\.json/);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
