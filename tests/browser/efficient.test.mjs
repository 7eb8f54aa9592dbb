// The efficient-attention chapter in the real page: the cost plot follows its controls, and
// the benchmark runs in a worker, on WebGPU when the browser has it (SwiftShader here), with
// the GPU's output checked against the naive CPU result; without WebGPU it says so.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer } from "./static-server.mjs";
import { launch, newPage } from "./browser.mjs";

let server, base, gpuBrowser, plainBrowser;
before(async () => {
  ({ server, url: base } = await startServer(new URL("../../dist", import.meta.url).pathname));
  gpuBrowser = await launch(["--enable-unsafe-webgpu"]);
  plainBrowser = await launch();
});
after(async () => { await gpuBrowser?.close(); await plainBrowser?.close(); server?.close(); });

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
  const diff = Number(/within ([\d.e+-]+)/.exec(readout)[1]);
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
  const canvas = () => page.$eval("#attention-cost canvas", (c) => c.toDataURL());
  await page.waitForSelector("#attention-cost canvas");
  await page.waitForTimeout(300);
  const before = await canvas();
  await page.$eval("#attention-cost-window", (r) => { r.value = "32"; r.dispatchEvent(new Event("input", { bubbles: true })); });
  await page.waitForFunction(() => new URL(location.href).searchParams.get("attention-cost.window") === "32");
  await page.waitForTimeout(300);
  assert.notEqual(await canvas(), before, "the sliding-window curve moved");
  const fresh = await newPage(plainBrowser);
  await fresh.goto(page.url());
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
  await page.$eval("#kv-cache-kv-heads", (r) => { r.value = "32"; r.dispatchEvent(new Event("input", { bubbles: true })); });
  await page.waitForFunction(() => /= 4\.00 GiB/.test(document.querySelector("#kv-cache .kv-readout").textContent));
  await page.$eval("#kv-cache-kv-heads", (r) => { r.value = "1"; r.dispatchEvent(new Event("input", { bubbles: true })); });
  await page.waitForFunction(() => /= 128\.0 MiB/.test(document.querySelector("#kv-cache .kv-readout").textContent));
  assert.equal(new URL(page.url()).searchParams.get("kv-cache.kv-heads"), "1");
  const fresh = await newPage(plainBrowser);
  await fresh.goto(page.url());
  await fresh.waitForSelector("#kv-cache .kv-readout");
  assert.match(await fresh.$eval("#kv-cache .kv-readout", (e) => e.textContent), /× 1 KV heads ×/);
  assert.deepEqual([...page.errors, ...fresh.errors], []);
  await page.context().close(); await fresh.context().close();
});
