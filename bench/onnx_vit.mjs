// ONNX Runtime Web running a Vision Transformer, in the same headless Chromium and with the same
// thread count as the book's worker (ORT_THREADS, default 1; more need a cross-origin isolated
// page, which the server then makes): the peer of bench/vision.mjs, which bench/vs-onnx.mjs
// (BENCH_FAMILY=vit) runs back to back with this.
// Setup (not part of CI): `npm install --no-save onnxruntime-web@1.30.0` and
// `python bench/export_onnx_vit.py FOLDER /tmp/attention-live-test-models/onnx/NAME` (see there).
// ORT_MODEL=NAME (shapes-vit, deit-tiny) picks the export. Measured: load (the session), then one
// picture's pass (pixels in; logits and every layer's attention out, as the book's engine gives
// the page), median of 5 after a warm-up.
// Run: node bench/onnx_vit.mjs   Prints a table row and writes bench/out/onnx-vit-NAME.json.
import fs from "node:fs";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";
import { rendererPeakMb } from "./memory.mjs";

const root = new URL("..", import.meta.url).pathname;
const site = "/tmp/attention-live-onnx-vit-bench";
const threads = Number(process.env.ORT_THREADS || 1);
const name = process.env.ORT_MODEL || "shapes-vit";
fs.rmSync(site, { recursive: true, force: true });
fs.mkdirSync(site, { recursive: true });
fs.cpSync(`${root}node_modules/onnxruntime-web/dist`, `${site}/ort`, { recursive: true });
fs.symlinkSync(`/tmp/attention-live-test-models/onnx/${name}/model.onnx`, `${site}/model.onnx`);
fs.writeFileSync(`${site}/index.html`, `<!doctype html><meta charset="utf-8"><script type="module">
import * as ort from "./ort/ort.min.mjs";
ort.env.wasm.numThreads = ${threads};
ort.env.wasm.wasmPaths = "/ort/";
window.bench = async () => {
  const t0 = performance.now();
  const s = await ort.InferenceSession.create("/model.onnx", { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
  const out = { load_ms: Math.round(performance.now() - t0) };
  const size = Number(s.inputMetadata?.[0]?.shape?.[2]) || ${name === "deit-tiny" ? 224 : 32};
  const pixels = new Float32Array(3 * size * size).map((_, i) => Math.sin(i) * 0.5);
  const feeds = { pixel_values: new ort.Tensor("float32", pixels, [1, 3, size, size]) };
  await s.run(feeds); // warm-up
  const runs = [];
  for (let i = 0; i < 5; i++) {
    const r0 = performance.now();
    const r = await s.run(feeds);
    r.attentions.data; // read back, as the page's maps need them
    runs.push(performance.now() - r0);
  }
  runs.sort((a, b) => a - b);
  out.run_ms = Math.round(runs[2]);
  out.size = size;
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
console.log(`| ONNX Runtime Web 1.30 (wasm, ${threads} thread${threads > 1 ? "s" : ""}) | ${name} | ${r.load_ms} ms | ` +
  `${r.run_ms} ms | ${r.renderer_peak_mb} MB |`);
fs.mkdirSync(new URL("./out", import.meta.url), { recursive: true });
fs.writeFileSync(new URL(`./out/onnx-vit-${name}.json`, import.meta.url),
  JSON.stringify({ date: new Date().toISOString(), chromium: browser.version(), threads, model: name, ...r }, null, 2));
await browser.close();
server.close();
