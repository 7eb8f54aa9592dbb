// Benchmark: in headless Chromium on this machine, against the release build in dist/.
//   - time from navigation to the first demo painted (median of 5 fresh loads);
//   - slider input -> canvas drawn, p50/p95 over 100 moves, for each demo's sliders, and
//     input -> the next frame's style, layout and paint done (the browser's work added);
//   - the wasm size, raw and gzipped.
// Run: node bench/latency.mjs   (after scripts/build.sh). Prints a table and writes
// bench/out/latency.json. These are measurements, not pass/fail tests.
import fs from "node:fs";
import zlib from "node:zlib";
import os from "node:os";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";
import { installSliderMoves } from "./slider-moves.mjs";

const dist = new URL("../dist", import.meta.url).pathname;
const { server, url } = await startServer(dist);
const browser = await launch();
const results = { date: new Date().toISOString(), machine: `${os.cpus().length} cores, ${os.cpus()[0].model}`, chromium: browser.version() };

// 1. First demo painted.
const firsts = [];
for (let i = 0; i < 5; i++) {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(url + "/soft-lookup/");
  await page.waitForFunction(() => window.__alFirstPaint !== undefined, null, { timeout: 20000 });
  firsts.push(await page.evaluate(() => window.__alFirstPaint));
  await page.context().close();
}
firsts.sort((a, b) => a - b);
results.first_paint_ms = { median: firsts[2], all: firsts.map((x) => +x.toFixed(1)) };

// 2. Slider -> canvas drawn.
const cases = [
  ["lookup", "/soft-lookup/", "#lookup-beta"],
  ["kernels", "/kernel-regression/", "#kernels-sigma"],
  ["nw (n = 40)", "/kernel-regression/", "#nw-sigma"],
  ["nw (n = 200)", "/kernel-regression/?nw.n=200", "#nw-sigma"],
  ["nw query (n = 200)", "/kernel-regression/?nw.n=200", "#nw-q"],
  ["nw points n", "/kernel-regression/", "#nw-n"],
  ["gauss-dot", "/scoring/", "#gauss-dot-theta"],
  ["scaling", "/scoring/", "#scaling-d"],
  ["scorers", "/scoring/", "#scorers-h"],
  ["padding", "/masking/", "#padding-v2"],
  ["causal", "/masking/", "#causal-n"],
  ["self-attn (n = 8, d = 8)", "/self-attention/?self-attn.n=8&self-attn.d=8", "#self-attn-d"],
  ["multi-head (h = 8)", "/multi-head/?multi-head.h=8", "#multi-head-n"],
  ["two-heads", "/multi-head/", "#two-heads-beta"],
  ["bank", "/self-attention/", "#bank-beta"],
  ["sinusoidal (d = 512, len = 128)", "/positional/?sinusoidal.d=512&sinusoidal.len=128", "#sinusoidal-base"],
  ["sinusoidal, d", "/positional/?sinusoidal.len=128", "#sinusoidal-d"],
  ["pe-shift (d = 32)", "/positional/?pe-shift.d=32", "#pe-shift-k"],
  ["rope", "/positional/", "#rope-m"],
  ["collapse (L = 48, all parts)", "/transformer-block/?collapse.layers=48&collapse.residual=1&collapse.ffn=1&collapse.ln=1", "#collapse-n"],
  ["sliding-window (n = 32, 8 layers)", "/efficient/?sliding-window.n=32&sliding-window.layers=8", "#sliding-window-window"],
  ["linformer (53 tokens, mask off)", "/efficient/", "#linformer-k", () => /Layer 0 head 0/.test(document.querySelector("#linformer .linformer-status")?.textContent)],
  ["kv-cache", "/efficient/", "#kv-cache-kv-heads"],
];
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10);
const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
results.slider = [];
// BENCH_ONLY=<text> measures only the cases whose name contains it.
const only = process.env.BENCH_ONLY;
for (const [name, path, sel, ready] of cases.filter(([name]) => !only || name.includes(only))) {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(url + path);
  await page.waitForSelector(sel);
  await page.waitForFunction(() => (window.__alPaints || 0) > 0);
  // Demos whose data arrives from a worker: wait until it has.
  if (ready) await page.waitForFunction(ready, null, { timeout: 60000 });
  await page.$eval(sel, (e) => e.scrollIntoView());
  await installSliderMoves(page);
  const { out: times, warm } = await page.evaluate(async ([sel, WARMUP]) => {
    const el = document.querySelector(sel);
    const out = [], warm = [];
    // The first WARMUP moves are not counted: V8 first runs wasm in its baseline compiler and
    // optimises the functions that turn out hot, so the first moves after a load are slower
    // (they are reported separately as warm-up).
    for (const [i, value] of window.__alSliderValues(el, WARMUP + 100).entries()) {
      const { drawn, frame } = await window.__alMoveInFrame(el, value);
      if (drawn !== null) (i < WARMUP ? warm : out).push([drawn, frame]);
    }
    return { out, warm };
  }, [sel, WARMUP]);
  if (process.env.BENCH_RAW) console.log(name, times.map(([d, f]) => `${d.toFixed(1)}/${f.toFixed(1)}`).join(" "));
  const drawn = times.map(([d]) => d).sort((a, b) => a - b);
  const frame = times.map(([, f]) => f).sort((a, b) => a - b);
  results.slider.push({
    demo: name, control: sel, moves: times.length, warmup_max_ms: +Math.max(...warm.map(([d]) => d)).toFixed(2),
    p50_ms: +pct(drawn, 50).toFixed(2), p95_ms: +pct(drawn, 95).toFixed(2), max_ms: +drawn[drawn.length - 1].toFixed(2),
    frame_p50_ms: +pct(frame, 50).toFixed(2), frame_p95_ms: +pct(frame, 95).toFixed(2),
  });
  if (page.errors.length) console.error(name, page.errors);
  await page.context().close();
}

// 3. Wasm size.
const wasm = fs.readdirSync(dist).find((f) => f.endsWith(".wasm"));
const bytes = fs.readFileSync(`${dist}/${wasm}`);
results.wasm = { file: wasm, raw_bytes: bytes.length, gzip_bytes: zlib.gzipSync(bytes, { level: 9 }).length };

await browser.close();
server.close();
fs.mkdirSync(new URL("./out", import.meta.url), { recursive: true });
fs.writeFileSync(new URL("./out/latency.json", import.meta.url), JSON.stringify(results, null, 2));

console.log(`${results.date}  ${results.machine}  Chromium ${results.chromium}`);
console.log(`first demo painted: median ${results.first_paint_ms.median.toFixed(0)} ms (runs: ${results.first_paint_ms.all.join(", ")})`);
console.log(`wasm: ${(results.wasm.raw_bytes / 1024).toFixed(0)} KiB raw, ${(results.wasm.gzip_bytes / 1024).toFixed(0)} KiB gzipped`);
console.log("slider input -> canvas drawn, and -> the frame's style, layout and paint done (ms):");
console.log("  demo                              control                 drawn p50     p95     max   frame p50     p95   moves   warm-up max");
for (const r of results.slider) {
  const n = (x, w) => String(x).padStart(w);
  console.log(`  ${r.demo.padEnd(33)} ${r.control.padEnd(22)} ${n(r.p50_ms, 10)} ${n(r.p95_ms, 7)} ${n(r.max_ms, 7)} ${n(r.frame_p50_ms, 11)} ${n(r.frame_p95_ms, 7)}   ${String(r.moves).padEnd(7)} ${r.warmup_max_ms}`);
}
