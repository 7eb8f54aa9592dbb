// The training lab as a reader uses it: train and see the loss fall; pause, scrub back, resume;
// the link reproduces the same loss at the same step in a fresh browser; a reload finds the run
// kept in this browser; a refused setting says
// why; the checkpoint downloads as a safetensors file and the trained model opens in the GPT-2
// chapter. Small models and few steps, so the whole file runs in well under a minute.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import {
  newPage, serveBook, closeBook, settledUrl, DESKTOP, setValue, gpt2Analysed, gpt2ChipTexts,
} from "./browser.mjs";

// `open(lab(settings))` opens the lab with those settings, once its Train button is there.
let server, base, browser, open;
before(async () =>
  ({ server, base, browser, open } = await serveBook({ page: DESKTOP, wait: ".train-lab .train-main" })));
after(() => closeBook({ server, browser }));

const SMALL = { task: "copy", n: 4, layers: 2, heads: 2, width: 16, pos: "learned", batch: 8, lr: 0.01 };
const lab = (p) => "/training/?" + Object.entries(p).map(([k, v]) => `train-lab.${k}=${v}`).join("&");

const status = (page) =>
  page.$eval(".train-status", (e) => ({ ...e.dataset, text: e.textContent, step: Number(e.dataset.step) }));
const waitPhase = (page, re, timeout = 60000) =>
  page.waitForFunction((r) => new RegExp(r).test(document.querySelector(".train-status")?.dataset.phase), re.source, { timeout });

test("train: the loss falls, the link holds the step, and a fresh browser retrains to the same loss", async () => {
  const page = await open(lab({ ...SMALL, steps: 80 }));
  // Before training: the untrained model's heads.
  await page.waitForFunction(() => document.querySelector(".train-heads")?.height > 0);
  assert.equal((await status(page)).phase, "idle");
  await page.click(".train-main");
  await waitPhase(page, /^done$/);
  const s = await status(page);
  assert.equal(s.step, 80);
  assert.ok(Number(s.loss) < Number(s.firstLoss) - 0.3, `the loss fell: ${s.firstLoss} -> ${s.loss}`);
  assert.match(s.text, /Done: 80 steps/);
  assert.match(s.text, /81 snapshots kept \(every step,/);
  assert.ok(await page.$eval(".train-heads", (c) => c.height > 0), "the heads are drawn");
  const url = await settledUrl(page);
  assert.match(url, /train-lab\.step=80/);
  assert.deepEqual(page.errors, []);

  // The link in a fresh context: retrained from the same seed to the same step, bit for bit.
  const fresh = await newPage(browser, { viewport: { width: 390, height: 844 } });
  await fresh.goto(url);
  await fresh.waitForSelector(".train-status");
  await fresh.waitForFunction(() => /Retraining to step 80|Paused at step 80|Done/.test(document.querySelector(".train-status").textContent));
  await waitPhase(fresh, /^(paused|done)$/);
  const r = await status(fresh);
  assert.equal(r.step, 80);
  assert.equal(r.loss, s.loss, "the same loss at the same step");
  assert.deepEqual(fresh.errors, []);
  await fresh.context().close();
  await page.context().close();
});

test("the run is kept in this browser: a reload finds it where it stopped; Reset forgets it", async () => {
  const page = await open(lab({ ...SMALL, steps: 60 }));
  await page.click(".train-main");
  await waitPhase(page, /^done$/);
  const s = await status(page);
  const url = await settledUrl(page);
  assert.match(url, /train-lab\.step=60/);
  // The kept run is written just after the run stops; a reload before it lands would retrain.
  await page.waitForFunction(async () => (await (await caches.open("attention-live-training")).keys()).length === 1);

  // A reload: the run as it was, without retraining (no "Retraining" status on the way).
  await page.reload();
  await page.waitForSelector(".train-status");
  await waitPhase(page, /^done$/);
  const r = await status(page);
  assert.equal(r.restored, "60");
  assert.deepEqual([r.step, r.loss, r.firstLoss], [60, s.loss, s.firstLoss], "the same curve");
  assert.match(r.text, /Done: 60 steps.*Restored from this browser, where the run was kept at step 60\..*61 snapshots kept/);
  // The lab's address without a step shows the kept run too, and more steps train on from it.
  await page.goto(base + lab({ ...SMALL, steps: 70 }));
  await waitPhase(page, /^paused$/);
  assert.equal((await status(page)).step, 60);
  assert.equal(await page.innerText(".train-main"), "Resume");
  await page.click(".train-main");
  await waitPhase(page, /^done$/);
  assert.equal((await status(page)).step, 70);

  // Reset forgets it: the next visit starts from random weights.
  await page.click(".train-reset");
  await waitPhase(page, /^idle$/);
  await page.goto(base + lab({ ...SMALL, steps: 70 }));
  await page.waitForFunction(() => document.querySelector(".train-heads")?.height > 0);
  assert.equal((await status(page)).phase, "idle");
  assert.equal((await status(page)).restored, undefined);

  // A damaged copy is refused and forgotten; the lab trains as if none was kept.
  await page.evaluate(async () => {
    const cache = await caches.open("attention-live-training");
    await cache.put("/attention-live/training-lab/run", new Response("ALrun\0\0\u0001 and then nothing"));
  });
  await page.reload();
  await page.waitForFunction(() => document.querySelector(".train-heads")?.height > 0);
  assert.equal((await status(page)).phase, "idle");
  await page.waitForFunction(async () => (await (await caches.open("attention-live-training")).keys()).length === 0);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("pause, scrub back to an earlier step's heads, and resume", async () => {
  const page = await open(lab({ ...SMALL, steps: 3000 }));
  await page.click(".train-main");
  await page.waitForFunction(() => Number(document.querySelector(".train-status").dataset.step) > 60, null, { timeout: 30000 });
  assert.equal(await page.innerText(".train-main"), "Pause");
  await page.click(".train-main");
  await waitPhase(page, /^paused$/);
  const paused = (await status(page)).step;
  await page.waitForTimeout(500);
  assert.equal((await status(page)).step, paused, "no step while paused");
  assert.equal(await page.innerText(".train-main"), "Resume");
  assert.match(await settledUrl(page), new RegExp(`train-lab\\.step=${paused}\\b`));
  // Snapshots every 30 steps (3000 / 100): step 45 shows the heads of step 30.
  await setValue(page, "#train-lab-step", "45");
  await page.waitForFunction(() => /Heads shown at step 30;/.test(document.querySelector(".train-status").textContent));
  await page.click(".train-main");
  await page.waitForFunction((p) => Number(document.querySelector(".train-status").dataset.step) > p, paused, { timeout: 30000 });
  assert.equal((await status(page)).phase, "training");
  assert.match(await settledUrl(page), /^(?!.*train-lab\.step=[1-9])/, "following the run again: no step in the link");
  await page.click(".train-reset");
  await waitPhase(page, /^idle$/);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("Train pressed while the untrained heads are still being prepared trains", async () => {
  // A slow worker start (a cold cache, a slow machine): the press comes before the preview ends.
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.route("**/gpt2-worker*_bg.wasm", async (r) => {
    await new Promise((done) => setTimeout(done, 1500));
    await r.continue();
  });
  await page.goto(base + lab({ ...SMALL, steps: 40 }));
  await page.waitForSelector(".train-lab .train-main");
  assert.equal((await status(page)).phase, "preparing");
  assert.equal(await page.innerText(".train-main"), "Train");
  await page.click(".train-main");
  await waitPhase(page, /^done$/);
  assert.equal((await status(page)).step, 40);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("a setting that does not fit is refused, naming the constraint", async () => {
  const page = await open(lab({ ...SMALL, heads: 3, steps: 50 }));
  assert.match(await page.innerText(".train-sizes"), /heads must divide the width: 3 heads do not divide 16/);
  assert.equal(await page.$eval(".train-main", (b) => b.disabled), true);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("the checkpoint downloads as safetensors and the trained model opens in the GPT-2 chapter", async () => {
  const page = await open(lab({ ...SMALL, steps: 40 }));
  await page.click(".train-main");
  await waitPhase(page, /^done$/);
  const files = {};
  page.on("download", async (d) => (files[d.suggestedFilename()] = await d.path()));
  await page.click(".train-export");
  for (let i = 0; i < 50 && Object.keys(files).length < 2; i++) await page.waitForTimeout(200);
  await page.waitForTimeout(300);
  assert.deepEqual(Object.keys(files).sort(), ["config.json", "model.safetensors"]);
  const config = JSON.parse(fs.readFileSync(files["config.json"], "utf8"));
  assert.equal(config.char_vocab, "0123456789abcdefghijklmnop>^");
  assert.equal(config.n_positions, 8);
  // The safetensors layout: an 8-byte little-endian header length, the JSON header, the data.
  const bytes = fs.readFileSync(files["model.safetensors"]);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString("utf8"));
  assert.deepEqual(header["wte.weight"].shape, [28, 16]);
  assert.equal(header["wte.weight"].dtype, "F32");
  const end = Math.max(...Object.values(header).filter((t) => t.data_offsets).map((t) => t.data_offsets[1]));
  assert.equal(bytes.length, 8 + n + end, "the data section is exactly as long as the header says");

  await page.click(".train-open");
  await page.waitForURL(/\/gpt2-live\/.*gpt2\.model=trained/, { timeout: 30000 });
  await gpt2Analysed(page, 0, 60000, false);
  const probe = (await gpt2ChipTexts(page)).join("");
  assert.equal(probe.length, 8, `the lab's probe as characters: ${probe}`);
  assert.match(probe, /^\^[a-p]{7}$/);
  // Back in the lab (its link retrains the same run), "Look inside" scores the trained model's
  // heads on the longest repeat its 8 positions hold: "^" and 3 letters twice.
  await page.goBack();
  await waitPhase(page, /^done$/);
  await page.click(".train-inside");
  await page.waitForURL(/\/inside\/.*inside\.model=trained/, { timeout: 30000 });
  await page.waitForFunction(() => document.querySelector("#inside .inside")?.dataset.answered === "true", null,
    { timeout: 60000 });
  assert.equal(new URL(page.url()).searchParams.get("inside.n"), "3");
  const rows = await page.$$eval('#inside [data-grid="induction"] tbody tr', (r) => r.length);
  assert.equal(rows, 2, "one row per layer of the lab's two");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
