// The training lab's model in the GPT-2 chapter: a checkpoint as the lab exports it (written by
// `cargo run --example write_trained_gpt2`, never committed), with a 28-character vocabulary.
// The lab stores it in Cache Storage under /models/trained/ (`demos::gpt2::trained::store`);
// this test stores the same files there, opens the link the lab opens (`trained::link`), and
// checks a browser without one says so in place. Also loads the same files from the picker.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { execFileSync } from "node:child_process";
import {
  newPage, settledUrl, serveBook, closeBook, ROOT, gpt2Status as status, gpt2Ready, gpt2Analysed, gpt2ChipTexts,
} from "./browser.mjs";

const dir = "/tmp/attention-live-test-models/trained";
const VOCAB = "0123456789abcdefghijklmnop>^";
// `trained::probe_prompt(VOCAB, 16)` and the link `trained::link` makes of it (tests/engines/gpt2_chars.rs).
const PROBE = "^afkpejodafkpejo";
let server, base, browser;

before(async () => {
  if (!fs.existsSync(`${dir}/model.safetensors`)) {
    execFileSync("cargo", ["run", "--quiet", "--example", "write_trained_gpt2", "--", dir],
      { cwd: ROOT, stdio: "inherit" });
  }
  ({ server, base, browser } = await serveBook());
});
after(() => closeBook({ server, browser }));

const link = `/gpt2-live/?gpt2.model=trained&gpt2.prompt=${encodeURIComponent(PROBE)}&gpt2.compare=&gpt2.head=0&gpt2.token=15#gpt2`;

test("a link to the trained model in a browser that has none says so, with a way to the lab", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}${link}`);
  await page.waitForSelector("#gpt2 .no-trained", { timeout: 30000 });
  assert.equal(await status(page), "not-cached");
  assert.match(await page.$eval("#gpt2 .no-trained", (e) => e.textContent), /No trained model in this browser: train one in the Watching attention learn chapter/);
  assert.equal(await page.$eval("#gpt2 .no-trained a", (a) => a.getAttribute("href")), "/training/");
  assert.equal(await page.$$eval("#gpt2 .download-model", (b) => b.length), 0, "nothing to download");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("the model the lab stored opens from its link: one chip per character, a refused character, generation", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/`);
  const config = fs.readFileSync(`${dir}/config.json`, "utf8");
  const model = [...fs.readFileSync(`${dir}/model.safetensors`)];
  await page.evaluate(async ([config, model]) => {
    const cache = await caches.open("attention-live-models");
    await cache.put("/models/trained/config.json", new Response(config));
    await cache.put("/models/trained/model.safetensors", new Response(new Uint8Array(model)));
  }, [config, model]);
  await page.goto(`${base}${link}`);
  await gpt2Analysed(page, 0, 30000, false);
  const line = await page.$eval("#gpt2 .model-status", (e) => e.textContent);
  assert.match(line, /Your trained model \(from the lab\): GPT-2 · 2 layers × 2 heads/);
  assert.match(line, /Loaded from this browser's storage/);
  assert.ok(line.includes(`It reads the characters “\u2068${VOCAB}\u2069”, one token each`), line);
  assert.deepEqual(await gpt2ChipTexts(page), [...PROBE]);
  // A character the model has no token for is refused in place, naming the ones it reads.
  await page.fill("#gpt2 textarea", "^abZ");
  await page.waitForSelector("#gpt2 .notice.error");
  const msg = await page.$eval("#gpt2 .notice.error", (e) => e.textContent);
  // The refused character quoted and isolated from the sentence around it.
  assert.ok(msg.includes("“\u2068Z\u2069”") && msg.includes(VOCAB), msg);
  await page.fill("#gpt2 textarea", "^abcab");
  await page.waitForFunction(() => !document.querySelector("#gpt2 .notice.error"), null, { timeout: 30000 });
  await page.waitForFunction(() => document.querySelectorAll("#gpt2 .chips:not(.compare .chips) .chip").length === 6);
  assert.deepEqual(await gpt2ChipTexts(page), ["^", "a", "b", "c", "a", "b"]);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("the lab's downloaded files load from the picker, and the English prompt gives way to the model's characters", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/gpt2-live/`);
  await gpt2Ready(page);
  // The picker shows for the model "local files" only.
  assert.equal(await page.$("#gpt2 input[type=file]"), null);
  await page.selectOption("#gpt2-model", "file");
  await page.setInputFiles("#gpt2 input[type=file]", [`${dir}/config.json`, `${dir}/model.safetensors`]);
  await page.waitForFunction(() => /Loaded from local files/.test(document.querySelector("#gpt2 .model-status")?.textContent || ""), null, { timeout: 30000 });
  await page.waitForFunction((probe) => document.querySelector("#gpt2 textarea")?.value === probe, PROBE);
  assert.match(await page.$eval("#gpt2 .gpt2", (g) => g.textContent), /the prompt was replaced by a sequence of them \(and the second prompt cleared\)/);
  await page.waitForFunction((n) => document.querySelectorAll("#gpt2 .chips:not(.compare .chips) .chip").length === n, PROBE.length);
  assert.equal(new URL(await settledUrl(page)).searchParams.get("gpt2.prompt"), PROBE);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
