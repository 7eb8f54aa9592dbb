// The efficient-attention chapter in the real page: the cost plot follows its controls, and
// the benchmark runs in a worker, on WebGPU when the browser has it (SwiftShader here), with
// the GPU's output checked against the naive CPU result; without WebGPU it says so.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  launch, newPage, settledUrl, serveBook, closeBook, setValue, textOf, untilText, canvasData,
} from "./browser.mjs";

let server, base, gpuBrowser, plainBrowser;
before(async () => {
  ({ server, base, browser: plainBrowser } = await serveBook());
  gpuBrowser = await launch(["--enable-unsafe-webgpu"]);
});
after(async () => { await gpuBrowser?.close(); await closeBook({ server, browser: plainBrowser }); });

async function runBench(browser) {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/efficient/?attention-cost.n-max=1024`);
  await page.waitForSelector("#attention-cost .run-bench");
  await page.click("#attention-cost .run-bench");
  await page.waitForFunction(() => {
    const e = document.querySelector("#attention-cost .attention-cost");
    return e.dataset.running === "false" && Number(e.dataset.rows) === 4;
  }, null, { timeout: 120000 });
  const rows = await page.$$eval("#attention-cost table.numbers tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const readout = await page.$eval("#attention-cost .readout", (e) => e.textContent);
  return { page, rows, readout };
}

test("the benchmark runs on WebGPU and matches the naive CPU result", async () => {
  const { page, rows, readout } = await runBench(gpuBrowser);
  assert.deepEqual(rows.map((r) => r[0]), ["128", "256", "512", "1024"]);
  for (const r of rows) assert.match(r[3], /^\d+(\.\d)? ms$/, `GPU time in ${r}`);
  assert.equal(rows[3][4], "4.2 MB", "1024² scores of 4 bytes");
  assert.match(readout, /GPU: browser WebGPU/);
  // The book's number format: "4.768 × 10⁻⁷" (or "0").
  const m = /within (0|([\d.]+) × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))/.exec(readout);
  const sup = (s) => Number([...s].map((c) => ({ "⁻": "-" })[c] ?? "⁰¹²³⁴⁵⁶⁷⁸⁹".indexOf(c)).join(""));
  const diff = m[1] === "0" ? 0 : Number(m[2]) * 10 ** sup(m[3]);
  assert.ok(diff < 1e-4, readout);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("without WebGPU the CPU columns run and the page says why there is no GPU column", async () => {
  const { page, rows, readout } = await runBench(plainBrowser);
  assert.ok(rows.every((r) => r[3] === "—" && /ms$/.test(r[1]) && /ms$/.test(r[2])));
  assert.match(readout, /No GPU column: this browser offers no WebGPU adapter/);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("the cost plot redraws when the window changes, and the link keeps it", async () => {
  const page = await newPage(plainBrowser, { viewport: { width: 390, height: 800 } });
  await page.goto(`${base}/efficient/`);
  const canvas = () => canvasData(page, "#attention-cost canvas");
  await page.waitForSelector("#attention-cost canvas");
  await page.waitForTimeout(300);
  const before = await canvas();
  await setValue(page, "#attention-cost-window", "32");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("attention-cost.window") === "32");
  await page.waitForTimeout(300);
  assert.notEqual(await canvas(), before, "the sliding-window curve moved");
  const fresh = await newPage(plainBrowser);
  await fresh.goto(await settledUrl(page));
  await fresh.waitForSelector("#attention-cost canvas");
  assert.equal(await fresh.$eval("#attention-cost-window", (r) => r.value), "32");
  assert.deepEqual([...page.errors, ...fresh.errors], []);
  await page.context().close(); await fresh.context().close();
});

test("the KV-cache calculator follows its controls and the link keeps them", async () => {
  const page = await newPage(plainBrowser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/efficient/`);
  const readout = () => page.$eval("#kv-cache .kv-readout", (e) => e.textContent);
  await page.waitForSelector("#kv-cache .kv-readout");
  assert.match(await readout(), /= 1\.00 GiB \(128\.0 KiB per token\)/, "Llama 3 8B's shape by default");
  const rows = await page.$$eval("#kv-cache table.numbers tbody tr", (trs) => trs.map((tr) => tr.children[5].textContent));
  assert.ok(rows.includes("2.00 GiB") && rows.includes("512.0 MiB"), rows.join(", "));
  // 4 GiB and more: past a 32-bit usize (the browser's), so the sizes are u64.
  await setValue(page, "#kv-cache-kv-heads", "32");
  await page.waitForFunction(() => /= 4\.00 GiB/.test(document.querySelector("#kv-cache .kv-readout").textContent));
  await setValue(page, "#kv-cache-kv-heads", "1");
  await page.waitForFunction(() => /= 128\.0 MiB/.test(document.querySelector("#kv-cache .kv-readout").textContent));
  assert.equal(new URL(await settledUrl(page)).searchParams.get("kv-cache.kv-heads"), "1");
  const fresh = await newPage(plainBrowser);
  await fresh.goto(await settledUrl(page));
  await fresh.waitForSelector("#kv-cache .kv-readout");
  assert.match(await fresh.$eval("#kv-cache .kv-readout", (e) => e.textContent), /× 1 KV heads ×/);
  assert.deepEqual([...page.errors, ...fresh.errors], []);
  await page.context().close(); await fresh.context().close();
});

test("the FlashAttention step-through walks tile by tile, checks itself and keeps its step in the link", async () => {
  const page = await newPage(plainBrowser, { viewport: { width: 390, height: 800 } });
  await page.goto(`${base}/efficient/`);
  const status = () => page.$eval("#flash-steps .flash-status", (e) => e.textContent);
  await page.waitForSelector("#flash-steps .flash-status");
  assert.match(await status(), /After tile 1 of 3/, "8 keys in tiles of 3");
  assert.equal(await page.$$eval("#flash-steps table.flash-steps tbody tr", (r) => r.length), 1);
  await page.click("#flash-steps button:has-text('Next tile')");
  await page.click("#flash-steps button:has-text('Next tile')");
  await page.waitForFunction(() => /All 3 tiles done/.test(document.querySelector("#flash-steps .flash-status").textContent));
  assert.equal(await page.$$eval("#flash-steps table.flash-steps tbody tr", (r) => r.length), 3);
  const check = await page.$eval("#flash-steps .check", (e) => e.textContent);
  assert.match(check, /^✓ .*differ by at most (0|[\d.]+ × 10⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+) ≤ 10⁻⁶/, check);
  assert.ok(await page.$eval("#flash-steps button:has-text('Next tile')", (b) => b.disabled), "nothing after the last tile");
  assert.equal(new URL(await settledUrl(page)).searchParams.get("flash-steps.step"), "3");
  // The final acc/ℓ printed is the naive row printed in the check.
  const final = /acc\/ℓ = (\([^)]*\))/.exec(await status())[1];
  assert.ok(check.includes(final), `${final} in ${check}`);
  const fresh = await newPage(plainBrowser);
  await fresh.goto(await settledUrl(page));
  await fresh.waitForSelector("#flash-steps .flash-status");
  assert.match(await fresh.$eval("#flash-steps .flash-status", (e) => e.textContent), /All 3 tiles done/);
  assert.deepEqual([...page.errors, ...fresh.errors], []);
  await page.context().close(); await fresh.context().close();
});

test("the sliding window's reach grows with the layers", async () => {
  const page = await newPage(plainBrowser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/efficient/?sliding-window.layers=1`);
  const readout = () => page.$eval("#sliding-window .readout", (e) => e.textContent);
  await page.waitForSelector("#sliding-window .token-strip");
  assert.match(await readout(), /hears from 4 tokens after 1 layer: L·\(w − 1\) \+ 1 = 1·3 \+ 1 = 4\./);
  assert.equal(await page.$$eval("#sliding-window .tok.reached, #sliding-window .tok.query", (e) => e.length), 4);
  await setValue(page, "#sliding-window-layers", "3");
  await page.waitForFunction(() => document.querySelectorAll("#sliding-window .tok.reached, #sliding-window .tok.query").length === 10);
  assert.match(await readout(), /hears from 10 tokens after 3 layers/);
  // Token 10 of 16 (6 back from the query) arrives at layer 2.
  assert.equal(await page.$eval("#sliding-window .token-strip .tok:nth-child(10) small", (e) => e.textContent), "2");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("the Linformer demo analyses a bundled model's head and follows layer, head and mask", async () => {
  const page = await newPage(plainBrowser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/efficient/?linformer.layer=1&linformer.head=3`);
  const status = () => page.$eval("#linformer .linformer-status", (e) => e.textContent);
  await page.waitForFunction(() => /Layer 1 head 3: 53 tokens/.test(document.querySelector("#linformer .linformer-status")?.textContent), null, { timeout: 60000 });
  assert.match(await status(), /Rank needed for 1% output error: \d+\. Linformer with 8 averaged positions: [\d.]+% error\./);
  await page.click("#linformer-causal");
  await page.waitForFunction(() => /Linformer's curve needs the mask off/.test(document.querySelector("#linformer .linformer-status").textContent));
  // With the mask, the matrix is triangular and needs a higher rank (hand-checked range).
  const rank = Number(/1% output error: (\d+)/.exec(await status())[1]);
  assert.ok(rank > 30 && rank <= 53, `${rank}`);
  await page.selectOption("#linformer-model", "induction");
  await page.waitForFunction(() => /Layer 1 head 3: 35 tokens/.test(document.querySelector("#linformer .linformer-status").textContent), null, { timeout: 60000 });
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

// Real models' insides, read by the compute worker in the page: the KV cache measured against the
// formula, the last turn's attention to an opening instruction (this chapter) and RoPE's offset
// property (positional chapter). The numbers are those tests/book/real_model_demos.rs checks natively.
test("the real models' cache, the instruction's reach and RoPE's diagonals, computed in the page", async () => {
  const page = await newPage(plainBrowser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/efficient/`);
  await untilText(page, "#kv-cache .kv-measured", /75,776 bytes/);
  const formula = /read 37 tokens.*2 × 4 layers × 2 KV heads × 32 × 37 positions × 4 bytes: exactly the formula/;
  assert.match(await textOf(page, "#kv-cache .kv-measured"), new RegExp(`${formula.source}.*151,552 bytes: 2× more`));
  await untilText(page, "#instruction-reach .reach-status", /With 8 turns/);
  assert.match(await textOf(page, "#instruction-reach .reach-status"),
    /gives the instruction 81% .* 18% \(layer 3 head 2\), against 20%/);
  await page.selectOption("#kv-cache-model", "stories");
  await untilText(page, "#kv-cache .kv-measured", /106,496 bytes/);
  assert.match(await textOf(page, "#kv-cache .kv-measured"), /its own key-value head/);

  await page.goto(`${base}/positional/`);
  await untilText(page, "#rope-model .rope-model-status", /Layer 0 head 0/);
  assert.match(await textOf(page, "#rope-model .rope-model-status"),
    /48 copies of the token “cat”.*every diagonal is one colour/);
  // The chapter's figures, as the page's build computes them: a spread under 10⁻⁶ of scores
  // spanning 0.73 with RoPE; with GPT-2's wpe, 1.03 (shown to two digits) of 1.9.
  const figures = async () => {
    const t = await textOf(page, "#rope-model .rope-model-status");
    const m = t.match(/varies by at most (.+?) \(.+ of the range of all scores, (.+?)\)/);
    assert.ok(m, t);
    const sup = { "⁰": 0, "¹": 1, "²": 2, "³": 3, "⁴": 4, "⁵": 5, "⁶": 6, "⁷": 7, "⁸": 8, "⁹": 9 };
    const sci = m[1].match(/^([\d.]+) × 10(⁻?)([⁰-⁹¹²³]+)$/u);
    const exp = sci && Number([...sci[3]].map((c) => sup[c]).join("")) * (sci[2] ? -1 : 1);
    return { spread: sci ? Number(sci[1]) * 10 ** exp : Number(m[1]), shown: m[1], range: m[2] };
  };
  const rope = await figures();
  assert.ok(rope.spread > 0 && rope.spread < 1e-6, `spread ${rope.shown}`);
  assert.equal(rope.range, "0.73");
  await page.selectOption("#rope-model-model", "stories");
  await untilText(page, "#rope-model .rope-model-status", /change colour/);
  const wpe = await figures();
  assert.deepEqual([wpe.shown, wpe.range], ["1", "1.9"]);
  // The sliders end at the loaded model's last layer and head (4 × 4), not SmolLM2's; a link's
  // layer past them moves to the last, with a notice.
  assert.deepEqual(await page.$$eval("#rope-model input[type=range]", (r) => r.map((e) => e.max)).then((m) => m.slice(-2)), ["3", "3"]);
  await page.goto(`${base}/positional/?rope-model.layer=9&rope-model.head=2#rope-model`);
  await untilText(page, "#rope-model .rope-model-status", /Layer 3 head 2,/);
  assert.match(await page.$$eval("#rope-model .notice", (ns) => ns.map((n) => n.textContent).join(" | ")),
    /Ignored rope-model\.layer="9" from the link: this model has layers 0 to 3; showing layer 3/);
  assert.deepEqual(await page.$$eval("#rope-model input[type=range]", (r) => r.map((e) => e.value).slice(-2)), ["3", "2"]);
  assert.equal(new URL(await settledUrl(page)).searchParams.get("rope-model.layer"), "3");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
