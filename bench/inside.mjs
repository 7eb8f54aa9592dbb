// Activation-patching sweeps in headless Chromium on this machine, against the release build in
// dist/: the chapter "Looking inside a model"'s demo, on a 16-token pair of prompts (the cat and
// the dog story, four tokens longer), both sweeps (the residual stream: (layers + 1) × positions
// cells; every head: layers × heads), for the bundled "stories" model and a random-init GPT-2
// small (124M, F32, written by `cargo run --example write_random_gpt2` into /tmp and served from
// 127.0.0.1, first downloaded in the real-model chapter's demo so that this browser keeps it), on
// the CPU with the threaded worker capped at 1 and then 2 threads (the same build; the server
// sends the isolation headers the service worker adds). The figure is the worker's time for the
// whole sweep (`Patching::compute_ms`: the clean and corrupted runs, then every patched run),
// and the page's, from the tool chosen to the grids drawn.
// Run: node bench/inside.mjs   (after scripts/build.sh). Prints a table and writes
// bench/out/inside.json. Measurements, not pass/fail tests.
import fs from "node:fs";
import os from "node:os";
import { execFileSync } from "node:child_process";
import { startServer } from "../tests/browser/static-server.mjs";
import { launchPersistent, downloadJson } from "../tests/browser/browser.mjs";

const root = new URL("..", import.meta.url).pathname;
const models = "/tmp/attention-live-test-models";
if (!fs.existsSync(`${models}/random-124m/model.safetensors`)) {
  execFileSync("cargo", ["run", "--quiet", "--example", "write_random_gpt2", "--", `${models}/random-124m`],
    { cwd: root, stdio: "inherit" });
}
const { server, url } = await startServer(process.env.BENCH_DIST || `${root}dist`, 0, { isolated: true });
const hub = await startServer(models, 0, { cors: true });
const base = `${hub.url}/random-124m/`;
const clean = "My cat is small, cute, and fluffy. She likes to sleep in the";
const corrupt = clean.replace("cat", "dog");
// BENCH_SWEEP=residual or heads times one sweep alone (default: both), into bench/out/inside-KIND.json.
const sweepKind = process.env.BENCH_SWEEP || "both";
const results = { sweep: sweepKind, date: new Date().toISOString(), machine: `${os.cpus().length} cores, ${os.cpus()[0].model}`, rows: [] };

async function sweep(page, model) {
  const q = new URLSearchParams({ "inside.model": model, "inside.tool": "patching", "inside.sweep": sweepKind,
    "inside.clean": clean, "inside.corrupt": corrupt, "inside.backend": "cpu" });
  if (model === "gpt2") q.set("inside.base", base);
  const t0 = Date.now();
  await page.goto(`${url}/inside/?${q}#inside`);
  await page.waitForFunction(() => {
    const e = document.querySelector("#inside .inside");
    return e?.dataset.tool === "patching" && e.dataset.answered === "true";
  }, null, { timeout: 600000 });
  const page_ms = Date.now() - t0;
  const a = (await downloadJson(page, "inside")).outputs.computed.answer;
  const runs = a.residual.flat().length - a.first * a.residual.length + a.heads.flat().length;
  return { worker_ms: Math.round(a.compute_ms), page_ms, tokens: a.clean.length, runs };
}

for (const threads of [1, 2]) {
  const profile = fs.mkdtempSync("/tmp/attention-live-bench-");
  const ctx = await launchPersistent(profile, { viewport: { width: 1280, height: 900 } });
  await ctx.addInitScript((n) => localStorage.setItem("attention-live:threads", String(n)), threads);
  const page = ctx.pages()[0] || await ctx.newPage();
  results.rows.push({ model: "stories (bundled, 4 layers × 4 heads)", threads, ...await sweep(page, "stories") });
  // GPT-2 small's shape: downloaded once in the real-model chapter, which keeps it in this profile.
  await page.goto(`${url}/gpt2-live/?gpt2.model=url&gpt2.base=${encodeURIComponent(base)}#gpt2`);
  await page.waitForSelector("#gpt2 .download-model", { timeout: 60000 });
  await page.click("#gpt2 .download-model");
  await page.waitForFunction(() => document.querySelector("#gpt2 .gpt2")?.dataset.status === "ready", null, { timeout: 600000 });
  results.rows.push({ model: "random GPT-2 small (12 layers × 12 heads, F32)", threads, ...await sweep(page, "gpt2") });
  await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
}

console.log(`sweep: ${sweepKind}`);
console.log("| model | threads | tokens | patched runs | sweep, worker | sweep, page |");
console.log("|---|---|---|---|---|---|");
for (const r of results.rows) {
  console.log(`| ${r.model} | ${r.threads} | ${r.tokens} | ${r.runs} | ${r.worker_ms} ms | ${r.page_ms} ms |`);
}
fs.mkdirSync(new URL("./out", import.meta.url), { recursive: true });
fs.writeFileSync(new URL(`./out/inside${sweepKind === "both" ? "" : `-${sweepKind}`}.json`, import.meta.url), JSON.stringify(results, null, 2));
server.close();
hub.server.close();
