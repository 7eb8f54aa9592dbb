// Benchmark: where a slider move's time goes in the browser, from a Chromium trace.
// Moves one slider 30 times (after 20 unrecorded warm-up moves) and prints, per move, the wall
// and CPU time of the page's script and of the frame phases that follow it. CPU time (the
// trace's thread time) moves less than wall time on a shared host, so it is the figure to
// compare between two versions of the page.
//
// Run, after scripts/build.sh (defaults: self-attn's d slider at n = d = 8):
//   node bench/frame-trace.mjs [path] [slider selector]
//   node bench/frame-trace.mjs "/multi-head/?multi-head.h=8" "#multi-head-n"
// FRAME_CSS='<css>' adds a style sheet first (to measure the page without a rule, say).
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";
import { installSliderMoves } from "./slider-moves.mjs";

const path = process.argv[2] || "/self-attention/?self-attn.n=8&self-attn.d=8";
const sel = process.argv[3] || "#self-attn-d";
const MOVES = 30;
// Renderer main thread: the frame task holds the move's script (run from the frame's
// requestAnimationFrame callback, as real input is), the lifecycle (style, layout, pre-paint,
// paint) and the commit to the compositor. Other threads: tile raster (workers) and the
// software compositor drawing the frame (the viz thread); on 2 cores they compete with the
// main thread.
const ROWS = [
  ["frame task on the main thread", "ProxyMain::BeginMainFrame"],
  ["  script (the input event and its draws)", "FunctionCall"],
  ["  lifecycle", "WebFrameWidgetImpl::UpdateLifecycle"],
  ["    style", "UpdateLayoutTree"],
  ["    layout", "Layout"],
  ["    pre-paint", "PrePaint"],
  ["    paint", "Paint"],
  ["tile raster (worker threads)", "RasterTask"],
  ["compositor draw (viz thread)", "Display::DrawAndSwap"],
];

const dist = new URL("../dist", import.meta.url).pathname;
const { server, url } = await startServer(dist);
const browser = await launch();
const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
await page.goto(url + path);
await page.waitForSelector(sel);
await page.waitForFunction(() => (window.__alPaints || 0) > 0);
if (process.env.FRAME_CSS) await page.addStyleTag({ content: process.env.FRAME_CSS });
await page.$eval(sel, (e) => e.scrollIntoView());

// Moves as bench/latency.mjs makes them: one per frame, the next once the frame's rendering is
// done (bench/slider-moves.mjs).
await installSliderMoves(page);
const move = (n) => page.evaluate(async ([sel, n]) => {
  const el = document.querySelector(sel);
  for (const value of window.__alSliderValues(el, n)) await window.__alMoveInFrame(el, value);
}, [sel, n]);

await move(20);
const cdp = await page.context().newCDPSession(page);
const events = [];
cdp.on("Tracing.dataCollected", (d) => events.push(...d.value));
const done = new Promise((r) => cdp.once("Tracing.tracingComplete", r));
await cdp.send("Tracing.start", { categories: "devtools.timeline,blink,cc,viz", transferMode: "ReportEvents" });
await move(MOVES);
await cdp.send("Tracing.end");
await done;

const sum = {};
for (const e of events) {
  if (e.ph !== "X" || !e.dur) continue;
  const s = (sum[e.name] ||= { wall: 0, cpu: 0 });
  s.wall += e.dur / 1000;
  s.cpu += (e.tdur || 0) / 1000;
}
console.log(`${path}  ${sel}  (${MOVES} moves, Chromium ${browser.version()}; tracing itself adds some time)`);
console.log("ms per move                                wall     cpu");
for (const [label, name] of ROWS) {
  const s = sum[name] || { wall: 0, cpu: 0 };
  console.log(`${label.padEnd(40)} ${(s.wall / MOVES).toFixed(2).padStart(6)}  ${(s.cpu / MOVES).toFixed(2).padStart(6)}`);
}
await browser.close();
server.close();
