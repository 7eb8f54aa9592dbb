// Benchmark: in headless Chromium on this machine, against the release build in dist/.
//   - time from navigation to the first demo painted (median of 5 fresh loads);
//   - slider input -> canvas drawn, p50/p95 over 100 moves, for each demo's sliders, and
//     input -> the next frame's style, layout and paint done (the browser's work added);
//   - the wasm size, raw and gzipped.
// Run: node bench/latency.mjs   (after scripts/build.sh). Prints a table and writes
// bench/out/latency.json. These are measurements, not pass/fail tests.
// To compare two builds back to back in one run: node bench/latency.mjs OLD_DIST NEW_DIST
// (each case is measured twice per build, alternating old and new, so the spread between a
// build's two rounds shows the run-to-run noise; the table gives new/old ratios of drawn p95).
import fs from "node:fs";
import zlib from "node:zlib";
import os from "node:os";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";
import { installSliderMoves } from "./slider-moves.mjs";

const dists = process.argv.length > 2 ? process.argv.slice(2) : [new URL("../dist", import.meta.url).pathname];
const servers = await Promise.all(dists.map((d) => startServer(d)));
const ROUNDS = dists.length > 1 ? 2 : 1;
const { url } = servers[0];
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
async function measure([name, path, sel, ready], base, b, round) {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(base + path);
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
  const row = {
    demo: name, build: b, round, control: sel, moves: times.length, warmup_max_ms: +Math.max(...warm.map(([d]) => d)).toFixed(2),
    p50_ms: +pct(drawn, 50).toFixed(2), p95_ms: +pct(drawn, 95).toFixed(2), max_ms: +drawn[drawn.length - 1].toFixed(2),
    frame_p50_ms: +pct(frame, 50).toFixed(2), frame_p95_ms: +pct(frame, 95).toFixed(2),
  };
  if (page.errors.length) console.error(name, page.errors);
  await page.context().close();
  return row;
}
for (const c of cases.filter(([name]) => !only || name.includes(only))) {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [b, s] of servers.entries()) results.slider.push(await measure(c, s.url, b, round));
  }
}

// 3. Wasm sizes (the page's main module and the worker's), per build.
const wasmFiles = (d) => fs.readdirSync(d).flatMap((f) => f.endsWith(".wasm") ? [f]
  : f.startsWith("page-") ? [`${f}/attention-live_bg.wasm`] : []);
results.wasm = dists.map((d) => wasmFiles(d).map((file) => {
  const bytes = fs.readFileSync(`${d}/${file}`);
  return { build: d, file, raw_bytes: bytes.length, gzip_bytes: zlib.gzipSync(bytes, { level: 9 }).length };
})).flat();

await browser.close();
for (const s of servers) s.server.close();
fs.mkdirSync(new URL("./out", import.meta.url), { recursive: true });
fs.writeFileSync(new URL("./out/latency.json", import.meta.url), JSON.stringify(results, null, 2));

console.log(`${results.date}  ${results.machine}  Chromium ${results.chromium}`);
console.log(`first demo painted: median ${results.first_paint_ms.median.toFixed(0)} ms (runs: ${results.first_paint_ms.all.join(", ")})`);
for (const w of results.wasm) {
  console.log(`wasm ${w.build}/${w.file}: ${(w.raw_bytes / 1024).toFixed(0)} KiB raw, ${(w.gzip_bytes / 1024).toFixed(0)} KiB gzipped`);
}
console.log("slider input -> canvas drawn, and -> the frame's style, layout and paint done (ms):");
console.log("  demo                              control                 drawn p50     p95     max   frame p50     p95   moves   warm-up max");
for (const r of results.slider) {
  const n = (x, w) => String(x).padStart(w);
  console.log(`  ${(r.demo + (dists.length > 1 ? ` [${r.build}.${r.round}]` : "")).padEnd(33)} ${r.control.padEnd(22)} ${n(r.p50_ms, 10)} ${n(r.p95_ms, 7)} ${n(r.max_ms, 7)} ${n(r.frame_p50_ms, 11)} ${n(r.frame_p95_ms, 7)}   ${String(r.moves).padEnd(7)} ${r.warmup_max_ms}`);
}
if (dists.length > 1) {
  // new/old ratio of drawn p95, each build's p95 the mean of its rounds; noise: how far a
  // build's two rounds differ from each other, relative to their mean (the larger of the two builds).
  console.log("\ndrawn p95, build 1 against build 0 (ratio > 1: build 1 slower), and the run-to-run noise:");
  console.log("  demo                              p95 b0   p95 b1   ratio   noise");
  for (const name of [...new Set(results.slider.map((r) => r.demo))]) {
    const of = (b) => results.slider.filter((r) => r.demo === name && r.build === b).map((r) => r.p95_ms);
    const mean = (xs) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const spread = (xs) => Math.abs(xs[0] - xs[xs.length - 1]) / Math.max(mean(xs), 1e-9);
    const [a, b] = [of(0), of(1)];
    const noise = Math.max(spread(a), spread(b));
    console.log(`  ${name.padEnd(33)} ${mean(a).toFixed(2).padStart(6)}   ${mean(b).toFixed(2).padStart(6)}   ${(mean(b) / mean(a)).toFixed(2).padStart(5)}   ${(100 * noise).toFixed(0).padStart(4)}%`);
  }
}
