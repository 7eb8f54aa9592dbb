// ONNX Runtime Web on the same random-init GPT-2 small, in the same headless Chromium, with
// the same thread count as the book's worker (ORT_THREADS, default 1; more need a cross-origin
// isolated page, which the server then makes): prompt forward at 16 and 128 tokens.
// Setup (not part of CI): `npm install --no-save onnxruntime-web@1.30.0` and
// `python bench/export_onnx.py` (writes /tmp/attention-live-test-models/onnx/gpt2.onnx).
// Run: node bench/onnx.mjs   Prints a table row and writes bench/out/onnx.json (with the
// renderer's peak memory, VmHWM, as bench/gpt2.mjs measures it).
import fs from "node:fs";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";
import { rendererPeakMb } from "./memory.mjs";

const root = new URL("..", import.meta.url).pathname;
const site = "/tmp/attention-live-onnx-bench";
const threads = Number(process.env.ORT_THREADS || 1);
fs.rmSync(site, { recursive: true, force: true });
fs.mkdirSync(site, { recursive: true });
fs.cpSync(`${root}node_modules/onnxruntime-web/dist`, `${site}/ort`, { recursive: true });
fs.symlinkSync("/tmp/attention-live-test-models/onnx/gpt2.onnx", `${site}/gpt2.onnx`);
fs.writeFileSync(`${site}/index.html`, `<!doctype html><meta charset="utf-8"><script type="module">
import * as ort from "./ort/ort.min.mjs";
ort.env.wasm.numThreads = ${threads};
ort.env.wasm.wasmPaths = "/ort/";
window.bench = async () => {
  const t0 = performance.now();
  const session = await ort.InferenceSession.create("/gpt2.onnx", { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
  const out = { load_ms: Math.round(performance.now() - t0) };
  for (const t of [16, 128]) {
    const ids = new ort.Tensor("int64", BigInt64Array.from({ length: t }, (_, i) => BigInt((i * 7919) % 50000)), [1, t]);
    await session.run({ input_ids: ids }); // warm-up
    const runs = [];
    for (let i = 0; i < 5; i++) { const s = performance.now(); await session.run({ input_ids: ids }); runs.push(performance.now() - s); }
    runs.sort((a, b) => a - b);
    out["prompt_" + t + "_ms"] = Math.round(runs[2]);
  }
  return out;
};
window.ready = true;
</script>`);

const { server, url } = await startServer(site, 0, { isolated: threads > 1 });
const browser = await launch();
const page = await newPage(browser);
await page.goto(url + "/");
await page.waitForFunction(() => window.ready);
const r = await page.evaluate(() => window.bench());
r.renderer_peak_mb = rendererPeakMb();
console.log(`| ONNX Runtime Web 1.30 (wasm, ${threads} thread${threads > 1 ? "s" : ""}) | random GPT-2 124M (F32) | ` +
  `${r.load_ms} ms | ${r.prompt_16_ms} ms | ${r.prompt_128_ms} ms | ${r.renderer_peak_mb} MB |`);
fs.mkdirSync(new URL("./out", import.meta.url), { recursive: true });
fs.writeFileSync(new URL("./out/onnx.json", import.meta.url), JSON.stringify({ date: new Date().toISOString(), chromium: browser.version(), threads, ...r }, null, 2));
await browser.close();
server.close();
