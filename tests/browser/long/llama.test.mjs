// A Llama-family checkpoint in the chapter: a small random-init one (2 layers, 6 query heads
// sharing 2 KV heads, written by `cargo run --example write_random_llama`, never committed) with
// its tokenizer.json, served from another 127.0.0.1 port through "Checkpoint from a URL". It
// loads (three files, the tokenizer from the checkpoint), the status names the family and the KV
// heads, the tokens are Hugging Face's, the head view and the next-token bars draw, generation
// works, and the link restores the state from the cache. Local files need the third file too.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { execFileSync } from "node:child_process";
import { startServer } from "../static-server.mjs";
import {
  launchPersistent, newPage, settledUrl, serveBook, closeBook, recordErrors, setValue, textOf, untilText, ROOT,
  gpt2Analysed as ready, gpt2Generate,
} from "../browser.mjs";

const models = "/tmp/attention-live-test-llama";
const cases = JSON.parse(fs.readFileSync(`${ROOT}/tests/fixtures/llama/tokenizer/cases.json`, "utf8")).cases;
let server, base, hub, browser;
const requests = [];

before(async () => {
  if (!fs.existsSync(`${models}/random-llama/tokenizer.json`)) {
    execFileSync("cargo", ["run", "--quiet", "--example", "write_random_llama", "--", `${models}/random-llama`],
      { cwd: ROOT, stdio: "inherit" });
  }
  ({ server, base, browser } = await serveBook());
  hub = await startServer(models, 0, { cors: true, onRequest: (p) => requests.push(p) });
});
after(async () => { await closeBook({ server, browser }); hub?.server.close(); });

const ids = (page) => page.$$eval("#gpt2 .chips:not(.compare .chips) .chip small", (s) => s.map((x) => Number(x.textContent)));

test("a Llama-family checkpoint from a URL: family and KV heads, HF's tokens, head view, bars, generation, link", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  const { text, ids: want } = cases[1];
  const folder = encodeURIComponent(hub.url + "/random-llama/");
  await page.goto(`${base}/gpt2-live/?gpt2.model=url&gpt2.base=${folder}&gpt2.prompt=${encodeURIComponent(text)}&gpt2.compare=`);
  await page.waitForSelector("#gpt2 .download-model");
  await page.click("#gpt2 .download-model");
  let id = await ready(page);
  assert.ok(requests.includes("/random-llama/tokenizer.json"), "the tokenizer comes from the checkpoint's folder");
  const status = await page.$eval("#gpt2 .model-status", (e) => e.textContent);
  assert.match(status, /Llama family · 2 layers × 6 heads \(2 KV heads\), 0\.\d+ M parameters, window 256 tokens/);
  assert.match(status, /A copy is kept in this browser/);
  assert.deepEqual(await ids(page), want, "token ids equal PreTrainedTokenizerFast's");
  // One head per query head in the head view's legend, and the plot drawn.
  assert.equal(await page.$$eval("#gpt2 .head-key", (k) => k.length), 6);
  const drawn = await page.$eval("#gpt2 .head-view", (c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    return new Set(Array.from({ length: d.length / 4 }, (_, i) => d[4 * i] * 65536 + d[4 * i + 1] * 256 + d[4 * i + 2])).size;
  });
  assert.ok(drawn > 3, `the head view is drawn (${drawn} colours)`);
  const probs = await page.$$eval("#gpt2 .next-list:not(.short) .next-prob", (ps) => ps.map((p) => parseFloat(p.textContent)));
  assert.equal(probs.length, 10);
  assert.ok(probs.every((p, i) => i === 0 || p <= probs[i - 1]), "sorted");
  // Knock out a head: the bars show both models.
  await page.click("#gpt2 .knock-out");
  await page.waitForFunction(() => document.querySelectorAll("#gpt2 .next-list:not(.short) .bar.knocked").length >= 10);
  id = await page.$eval("#gpt2 .gpt2", (g) => Number(g.dataset.analysis));
  // Generation with the KV cache writes a continuation, which the reader adds to the prompt.
  const before = await page.$eval("#gpt2 textarea", (t) => t.value);
  const generated = await gpt2Generate(page, 30000, true);
  assert.ok(!/<\|endoftext\|>|<\/s>/.test(generated), generated);
  await page.click("#gpt2 .continuation .append");
  await page.waitForFunction((b) => document.querySelector("#gpt2 textarea").value.length > b.length, before);
  const prompt = await page.$eval("#gpt2 textarea", (t) => t.value);
  assert.equal(prompt, before + generated);
  id = await ready(page, id);
  const url = new URL(await settledUrl(page));
  assert.equal(url.searchParams.get("gpt2.model"), "url");
  assert.equal(url.searchParams.get("gpt2.prompt"), prompt);
  const shown = await ids(page);
  // The link, in another tab of the same browser: loaded from its storage without asking.
  const downloads = requests.filter((p) => p.endsWith(".safetensors")).length;
  const again = await page.context().newPage();
  recordErrors(again, false);
  await again.goto(url.href);
  await ready(again);
  assert.deepEqual(await ids(again), shown);
  assert.match(await again.$eval("#gpt2 .model-status", (e) => e.textContent), /Llama family · 2 layers × 6 heads \(2 KV heads\).*Loaded from this browser's storage/);
  assert.ok(await again.$$eval("#gpt2 .next-list:not(.short) .bar.knocked", (b) => b.length) >= 10, "the knock-out is restored");
  assert.equal(requests.filter((p) => p.endsWith(".safetensors")).length, downloads, "no second download");
  assert.deepEqual(page.errors, []);
  assert.deepEqual(again.errors, []);
  await page.context().close();
});

test("local files: a Llama-family checkpoint loads with its tokenizer.json, and is refused without it", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/gpt2-live/?gpt2.model=file`);
  await page.waitForSelector("#gpt2 input[type=file]");
  const dir = `${models}/random-llama`;
  await page.setInputFiles("#gpt2 input[type=file]", [`${dir}/config.json`, `${dir}/model.safetensors`]);
  await page.waitForSelector("#gpt2 .gpt2[data-status=failed]", { timeout: 30000 });
  assert.match(await page.$eval("#gpt2 .notice.error", (e) => e.textContent), /tokenizer\.json is missing/);
  await page.setInputFiles("#gpt2 input[type=file]", [`${dir}/tokenizer.json`, `${dir}/config.json`, `${dir}/model.safetensors`]);
  await page.waitForFunction(() => /Loaded from local files/.test(document.querySelector("#gpt2 .model-status")?.textContent || ""), null, { timeout: 30000 });
  assert.match(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /Llama family · 2 layers × 6 heads \(2 KV heads\)/);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

// The page's engine (the wasm build: four-lane SiLU and dot products, packed matrix products)
// on the bundled Llama-family model, against transformers' logits for the same prompt
// (tests/fixtures/llama/stories, written by scripts/llama/train_bundled.py).
test("the bundled Llama-family model in the page: transformers' ids and next-token probabilities", async () => {
  const ref = JSON.parse(fs.readFileSync(`${ROOT}/tests/fixtures/llama/stories/reference.json`, "utf8")).cases[0];
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/gpt2-live/?gpt2.model=stories-llama&gpt2.prompt=${encodeURIComponent(ref.text)}&gpt2.compare=`);
  await ready(page);
  assert.deepEqual(await ids(page), ref.ids);
  const [dl] = await Promise.all([page.waitForEvent("download"), page.click("#gpt2 .download-data")]);
  const next = JSON.parse(fs.readFileSync(await dl.path(), "utf8")).outputs.computed.analysis.next;
  // softmax of transformers' last logits, in f64
  const top = Math.max(...ref.last_logits);
  const z = ref.last_logits.reduce((a, l) => a + Math.exp(l - top), 0);
  const want = (id) => Math.exp(ref.last_logits[id] - top) / z;
  const order = ref.last_logits.map((l, i) => [l, i]).sort((a, b) => b[0] - a[0]).slice(0, next.length).map((x) => x[1]);
  assert.deepEqual(next.map((c) => c.id), order, "the same ten most likely tokens, in order");
  const worst = Math.max(...next.map((c) => Math.abs(c.prob - want(c.id))));
  console.log(`# stories-llama in the page: probabilities within ${worst.toExponential(1)} of transformers'`);
  assert.ok(worst < 1e-5, `largest difference ${worst}`);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("SmolLM2-135M's entry: a random model of its shape from a folder given for it (the hub cannot be reached here)", async () => {
  const dir = `${models}/random-smollm2`;
  if (!fs.existsSync(`${dir}/tokenizer.json`)) {
    execFileSync("cargo", ["run", "--quiet", "--example", "write_random_llama", "--", dir, "smollm2"],
      { cwd: ROOT, stdio: "inherit" });
  }
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/gpt2-live/?gpt2.model=smollm2&gpt2.base=${encodeURIComponent(hub.url + "/random-smollm2/")}&gpt2.prompt=Hello%20world&gpt2.compare=`);
  await page.waitForSelector("#gpt2 .download-model");
  const offer = await page.$eval("#gpt2 .model-status", (e) => e.textContent);
  assert.match(offer, /SmolLM2-135M \(Llama family, download ~270 MB\) is not stored in this browser yet/);
  const t0 = Date.now();
  await page.click("#gpt2 .download-model");
  if (/no pinned SHA-256/.test(offer)) {
    // Unpinned (scripts/llama/pin_smollm2.py not run): checked by loading, and it runs.
    await ready(page);
    console.log(`# random SmolLM2-135M shape: downloaded, parsed and first analysis in ${Date.now() - t0} ms`);
    assert.match(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /Llama family · 30 layers × 9 heads \(3 KV heads\), 134\.52 M parameters, window 8192 tokens/);
    assert.deepEqual(await ids(page), cases[0].ids);
    // A long prompt (30 × 9 × T² weights, past the worker's limit): the selected layer in full,
    // every other layer as a thumbnail recomputed from the residual stream, so the model view
    // still draws layer 7.
    const before = await page.$eval("#gpt2 .gpt2", (g) => Number(g.dataset.analysis));
    await setValue(page, "#gpt2 textarea", "one two three four five six seven eight nine ten ".repeat(15));
    const t1 = Date.now();
    await ready(page, before);
    console.log(`# random SmolLM2-135M shape, ${await page.$$eval("#gpt2 .chip", (c) => c.length)}-token prompt analysed in ${Date.now() - t1} ms`);
    const colours = await page.$eval("#gpt2 .model-view", (c) => {
      const cell = Math.min(96, Math.max(24, (c.width - 26) / 9));
      const x = 26 + 4 * cell + 2, y = 26 + 7 * cell + 2 + (cell - 4) / 2;
      const d = c.getContext("2d").getImageData(x, y, cell - 4, 1).data;
      return new Set(Array.from({ length: d.length / 4 }, (_, i) => `${d[4 * i]},${d[4 * i + 1]},${d[4 * i + 2]}`)).size;
    });
    assert.ok(colours >= 2, `layer 7's thumbnail is drawn (${colours} colours in a row)`);
  } else {
    // Pinned: a random model is not SmolLM2-135M, and is refused with the reason.
    await page.waitForSelector("#gpt2 .gpt2[data-status=failed]", { timeout: 60000 });
    assert.match(await page.$eval("#gpt2 .notice.error", (e) => e.textContent), /pinned/);
  }
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

// The hub's own address for SmolLM2-135M, with huggingface.co mapped to a local HTTPS server (a
// certificate made here, accepted by this browser only) holding the random model of its shape:
// the chapter downloads and keeps it, and the demos of the positional and efficient chapters that
// offer "SmolLM2-135M (once loaded …)" then read it from this browser's cache.
test("SmolLM2-135M, once loaded in the chapter, is what the RoPE, KV-cache and instruction demos read", async () => {
  const dir = `${models}/random-smollm2`;
  if (!fs.existsSync(`${dir}/tokenizer.json`)) {
    execFileSync("cargo", ["run", "--quiet", "--example", "write_random_llama", "--", dir, "smollm2"],
      { cwd: ROOT, stdio: "inherit" });
  }
  const site = fs.mkdtempSync("/tmp/attention-live-hub-");
  fs.mkdirSync(`${site}/HuggingFaceTB/SmolLM2-135M/resolve`, { recursive: true });
  fs.symlinkSync(dir, `${site}/HuggingFaceTB/SmolLM2-135M/resolve/main`);
  const keys = fs.mkdtempSync("/tmp/attention-live-tls-"); // beside the served folder, not in it
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=huggingface.co",
    "-keyout", `${keys}/key.pem`, "-out", `${keys}/cert.pem`], { stdio: "ignore" });
  const tls = { key: fs.readFileSync(`${keys}/key.pem`), cert: fs.readFileSync(`${keys}/cert.pem`) };
  fs.rmSync(keys, { recursive: true, force: true });
  const hf = await startServer(site, 0, { cors: true, tls });
  const port = hf.server.address().port;
  const profile = fs.mkdtempSync("/tmp/attention-live-profile-");
  const context = await launchPersistent(profile, { viewport: { width: 1280, height: 900 } },
    [`--host-resolver-rules=MAP huggingface.co 127.0.0.1:${port}`, "--ignore-certificate-errors"]);
  try {
    const page = context.pages()[0] || await context.newPage();
    const errors = recordErrors(page);
    await page.goto(`${base}/gpt2-live/?gpt2.model=smollm2&gpt2.prompt=Hello%20world&gpt2.compare=`);
    await page.click("#gpt2 .download-model");
    await ready(page);
    assert.match(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /A copy is kept/);
    // RoPE: whatever the weights, with the same token everywhere the first layer's scores
    // depend on the offset alone; the sliders end at SmolLM2's 30 layers and 9 heads.
    await page.goto(`${base}/positional/?rope-model.model=smollm2#rope-model`);
    await untilText(page, "#rope-model .rope-model-status", /Layer 0 head 0/);
    // (The random model's small test tokenizer reads " cat" as two tokens: pairs are compared like with like.)
    assert.match(await textOf(page, "#rope-model .rope-model-status"), /every diagonal is one colour/);
    assert.deepEqual(await page.$$eval("#rope-model input[type=range]", (r) => r.map((e) => e.max).slice(-2)), ["29", "8"]);
    // Its cache: 2 × 30 layers × 3 KV heads × 64 × T positions × 4 bytes, a third of one KV head per query head.
    await page.goto(`${base}/efficient/?kv-cache.model=smollm2&instruction-reach.model=smollm2&instruction-reach.turns=2`);
    await untilText(page, "#kv-cache .kv-measured", /Measured in this page/);
    const kv = await textOf(page, "#kv-cache .kv-measured");
    const m = kv.match(/read (\d+) tokens, and its cache holds ([\d,]+) bytes.*2 × 30 layers × 3 KV heads × 64 × \1 positions × 4 bytes: exactly the formula.*: 3× more/);
    assert.ok(m, kv);
    assert.equal(Number(m[2].replaceAll(",", "")), 2 * 30 * 3 * 64 * Number(m[1]) * 4);
    assert.equal(await page.$eval("#instruction-reach-model", (e) => e.value), "smollm2");
    await untilText(page, "#instruction-reach .reach-status", /With 2 turns/);
    assert.match(await textOf(page, "#instruction-reach .reach-status"), /\(layer \d+ head [0-8]\)/);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    hf.server.close();
    fs.rmSync(profile, { recursive: true, force: true });
    fs.rmSync(site, { recursive: true, force: true });
  }
});
