// ONNX Runtime Web running a Marian translation model, in the same headless Chromium and with the
// same thread count as the book's worker (ORT_THREADS, default 1; more need a cross-origin isolated
// page, which the server then makes): the peer of bench/translation.mjs, which
// bench/vs-onnx.mjs (BENCH_FAMILY=marian) runs back to back with this.
// Setup (not part of CI): `npm install --no-save onnxruntime-web@1.30.0` and
// `python bench/export_onnx_marian.py FOLDER /tmp/attention-live-test-models/onnx/NAME` (see there).
// ORT_MODEL=NAME (dates, opus) picks the export; ORT_SOURCE=S source tokens (the last one `</s>`) and
// ORT_STEPS=N target tokens: the book's page tells vs-onnx.mjs how many its sentence and translation
// have, so both do the same work (a random model never writes `</s>`, so the steps are forced here).
// Measured: load (both graphs' sessions), then for greedy decoding and for beam search with 4 beams
// (the beams a batch of the decoder, their caches reordered by their parents, as the book's engine
// does): time to the first target token and the whole translation, median of 3 after a warm-up.
// Run: node bench/onnx_marian.mjs   Prints a table row and writes bench/out/onnx-marian-NAME.json.
import fs from "node:fs";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";
import { rendererPeakMb } from "./memory.mjs";

const root = new URL("..", import.meta.url).pathname;
const site = "/tmp/attention-live-onnx-marian-bench";
const threads = Number(process.env.ORT_THREADS || 1);
const name = process.env.ORT_MODEL || "dates";
const sourceLen = Number(process.env.ORT_SOURCE || 16);
const steps = Number(process.env.ORT_STEPS || 20);
// The steps of the 4-beam search (the page's best hypothesis's length), when they differ.
const beamSteps = Number(process.env.ORT_BEAM_STEPS || steps);
fs.rmSync(site, { recursive: true, force: true });
fs.mkdirSync(site, { recursive: true });
fs.cpSync(`${root}node_modules/onnxruntime-web/dist`, `${site}/ort`, { recursive: true });
for (const g of ["encoder", "decoder"]) {
  fs.symlinkSync(`/tmp/attention-live-test-models/onnx/${name}/${g}.onnx`, `${site}/${g}.onnx`);
}
const meta = JSON.parse(fs.readFileSync(`/tmp/attention-live-test-models/onnx/${name}/meta.json`, "utf8"));
fs.writeFileSync(`${site}/index.html`, `<!doctype html><meta charset="utf-8"><script type="module">
import * as ort from "./ort/ort.min.mjs";
ort.env.wasm.numThreads = ${threads};
ort.env.wasm.wasmPaths = "/ort/";
const opts = { executionProviders: ["wasm"], graphOptimizationLevel: "all" };
const ids = (xs, rows) => new ort.Tensor("int64", BigInt64Array.from(xs, BigInt), [rows, xs.length / rows]);
window.bench = async (S, N, NB) => {
  const t0 = performance.now();
  const enc = await ort.InferenceSession.create("/encoder.onnx", opts);
  const dec = await ort.InferenceSession.create("/decoder.onnx", opts);
  const out = { load_ms: Math.round(performance.now() - t0) };
  const past = dec.inputNames.filter((n) => n.startsWith("past."));
  const crossNames = dec.inputNames.filter((n) => n.startsWith("cross."));
  const source = ids([...Array.from({ length: S - 1 }, (_, i) => 5 + (i * 7) % 100), ${meta.eos_token_id}], 1);
  // Rows of a [B, ...] tensor taken from rows \`from\` of another (beams continuing their parents).
  const gather = (t, from) => {
    const per = t.data.length / t.dims[0];
    const data = new Float32Array(per * from.length);
    from.forEach((r, i) => data.set(t.data.subarray(r * per, (r + 1) * per), i * per));
    return new ort.Tensor("float32", data, [from.length, ...t.dims.slice(1)]);
  };
  const translate = async (B, N) => {
    const s0 = performance.now();
    const cross = await enc.run({ input_ids: source });
    const rows = Array(B).fill(0);
    const feeds = {};
    for (const n of crossNames) feeds[n] = B === 1 ? cross[n] : gather(cross[n], rows);
    const h = cross[crossNames[0]].dims[1], d = cross[crossNames[0]].dims[3];
    for (const n of past) feeds[n] = new ort.Tensor("float32", new Float32Array(0), [B, h, 0, d]);
    let tokens = Array(B).fill(${meta.decoder_start_token_id}), scores = Array.from({ length: B }, (_, i) => (i ? -1e9 : 0));
    let first = 0;
    for (let step = 0; step < N; step++) {
      const r = await dec.run({ input_ids: ids(tokens, B), ...feeds });
      if (step === 0) first = performance.now() - s0;
      const logits = r.logits.data, V = logits.length / B;
      // Each beam's log-probabilities plus its score; the B best of the B × V continuations.
      const best = [];
      for (let b = 0; b < B; b++) {
        let m = -Infinity, z = 0;
        for (let v = 0; v < V; v++) m = Math.max(m, logits[b * V + v]);
        for (let v = 0; v < V; v++) z += Math.exp(logits[b * V + v] - m);
        const lz = m + Math.log(z);
        for (let v = 0; v < V; v++) {
          const s = logits[b * V + v] - lz + scores[b];
          if (best.length < B || s > best[best.length - 1][0]) {
            best.push([s, b, v]); best.sort((x, y) => y[0] - x[0]); if (best.length > B) best.pop();
          }
        }
      }
      const parents = best.map((c) => c[1]);
      tokens = best.map((c) => c[2]); scores = best.map((c) => c[0]);
      for (const n of past) {
        const p = r[n.replace("past.", "present.")];
        feeds[n] = B === 1 ? p : gather(p, parents);
      }
    }
    return { ms: performance.now() - s0, first_ms: first };
  };
  for (const B of [1, 4]) {
    const steps = B === 1 ? N : NB;
    await translate(B, steps); // warm-up
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await translate(B, steps));
    runs.sort((a, b) => a.ms - b.ms);
    const m = runs[1];
    out["beams_" + B] = { ms: Math.round(m.ms), first_ms: Math.round(m.first_ms), tokens: steps,
      tok_s: +(steps / (m.ms / 1000)).toFixed(1) };
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
const r = await page.evaluate(([s, n, nb]) => window.bench(s, n, nb), [sourceLen, steps, beamSteps]);
r.renderer_peak_mb = rendererPeakMb();
const b = (x) => `${x.ms} ms (first token ${x.first_ms} ms), ${x.tok_s} tok/s`;
console.log(`| ONNX Runtime Web 1.30 (wasm, ${threads} thread${threads > 1 ? "s" : ""}) | ${name}, ${sourceLen} → ${steps} tokens | ` +
  `${r.load_ms} ms | ${b(r.beams_1)} | ${b(r.beams_4)} | ${r.renderer_peak_mb} MB |`);
fs.mkdirSync(new URL("./out", import.meta.url), { recursive: true });
fs.writeFileSync(new URL(`./out/onnx-marian-${name}.json`, import.meta.url),
  JSON.stringify({ date: new Date().toISOString(), chromium: browser.version(), threads, model: name, source: sourceLen, steps, ...r }, null, 2));
await browser.close();
server.close();
