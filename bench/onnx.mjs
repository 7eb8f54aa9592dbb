// ONNX Runtime Web on the same random-init GPT-2 small, in the same headless Chromium, with
// the same thread count as the book's worker (ORT_THREADS, default 1; more need a cross-origin
// isolated page, which the server then makes): prompt forward at 16 and 128 tokens.
// Setup (not part of CI): `npm install --no-save onnxruntime-web@1.30.0` and
// `python bench/export_onnx.py` (writes /tmp/attention-live-test-models/onnx/gpt2.onnx).
// Run: node bench/onnx.mjs   Prints a table row and writes bench/out/onnx.json (with the
// renderer's peak memory, VmHWM, as bench/gpt2.mjs measures it).
// ORT_MODEL=NAME runs /tmp/attention-live-test-models/onnx/NAME.onnx instead, into
// bench/out/onnx-NAME.json: a Llama-family export with a KV cache (`python
// bench/export_onnx_llama.py FOLDER …/NAME.onnx`: stories-llama, smollm2) is also timed
// generating 20 greedy tokens with its cache after a prompt of ORT_GEN_PROMPT tokens (default 16),
// as the book's page does (tokens per second over the prompt and the 20 steps).
import fs from "node:fs";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";
import { rendererPeakMb } from "./memory.mjs";

const root = new URL("..", import.meta.url).pathname;
const site = "/tmp/attention-live-onnx-bench";
const threads = Number(process.env.ORT_THREADS || 1);
const name = process.env.ORT_MODEL || "gpt2";
const genPrompt = Number(process.env.ORT_GEN_PROMPT || 16);
fs.rmSync(site, { recursive: true, force: true });
fs.mkdirSync(site, { recursive: true });
fs.cpSync(`${root}node_modules/onnxruntime-web/dist`, `${site}/ort`, { recursive: true });
fs.symlinkSync(`/tmp/attention-live-test-models/onnx/${name}.onnx`, `${site}/model.onnx`);
fs.writeFileSync(`${site}/index.html`, `<!doctype html><meta charset="utf-8"><script type="module">
import * as ort from "./ort/ort.min.mjs";
ort.env.wasm.numThreads = ${threads};
ort.env.wasm.wasmPaths = "/ort/";
window.bench = async () => {
  const t0 = performance.now();
  const session = await ort.InferenceSession.create("/model.onnx", { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
  const out = { load_ms: Math.round(performance.now() - t0) };
  // A Llama-family export takes its KV cache as inputs (empty for a prompt: [1, KV, 0, D]).
  const past = session.inputNames.filter((n) => n.startsWith("past_key_values."));
  const shape = (n) => session.inputMetadata?.find?.((m) => m.name === n)?.shape;
  const none = (n) => new ort.Tensor("float32", new Float32Array(0), [1, shape(n)[1], 0, shape(n)[3]]);
  const empty = Object.fromEntries(past.map((n) => [n, none(n)]));
  const tensor = (xs) => new ort.Tensor("int64", BigInt64Array.from(xs, BigInt), [1, xs.length]);
  const prompt = (t) => tensor(Array.from({ length: t }, (_, i) => (i * 7919) % (past.length ? 800 : 50000)));
  for (const t of [16, 128]) {
    const ids = prompt(t);
    await session.run({ input_ids: ids, ...empty }); // warm-up
    const runs = [];
    for (let i = 0; i < 5; i++) { const s = performance.now(); await session.run({ input_ids: ids, ...empty }); runs.push(performance.now() - s); }
    runs.sort((a, b) => a - b);
    out["prompt_" + t + "_ms"] = Math.round(runs[2]);
  }
  if (past.length) {
    // Greedy generation with the cache: each step's present.* are the next step's past_key_values.*.
    const generate = async (steps) => {
      let r = await session.run({ input_ids: prompt(${genPrompt}), ...empty });
      for (let i = 0; i < steps; i++) {
        const logits = r.logits.data;
        let best = 0;
        for (let v = 1; v < logits.length; v++) if (logits[v] > logits[best]) best = v;
        const feeds = { input_ids: tensor([best]) };
        for (const n of past) feeds[n] = r[n.replace("past_key_values.", "present.")];
        r = await session.run(feeds);
      }
    };
    await generate(2); // warm-up
    const s = performance.now();
    await generate(20);
    out.generate_tok_s = +(20 / ((performance.now() - s) / 1000)).toFixed(1);
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
const label = name === "gpt2" ? "random GPT-2 124M (F32)" : name;
const decode = r.generate_tok_s ? ` ${r.generate_tok_s} tok/s |` : "";
console.log(`| ONNX Runtime Web 1.30 (wasm, ${threads} thread${threads > 1 ? "s" : ""}) | ${label} | ` +
  `${r.load_ms} ms | ${r.prompt_16_ms} ms | ${r.prompt_128_ms} ms |${decode} ${r.renderer_peak_mb} MB |`);
fs.mkdirSync(new URL("./out", import.meta.url), { recursive: true });
fs.writeFileSync(new URL(`./out/${name === "gpt2" ? "onnx" : `onnx-${name}`}.json`, import.meta.url),
  JSON.stringify({ date: new Date().toISOString(), chromium: browser.version(), threads, model: name, ...r }, null, 2));
await browser.close();
server.close();
