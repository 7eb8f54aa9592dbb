// GPT-2 benchmark in headless Chromium on this machine, against the release build in dist/:
// for the bundled "stories" model and a random-init GPT-2 small (124M, F32, written by
// `cargo run --example write_random_gpt2` into /tmp and served from 127.0.0.1):
//   - load: navigation (stories) or the Download click (124M) to the first analysis drawn;
//   - prompt forward at 16 and 128 tokens: the worker's compute time for one analysis
//     (forward pass with every attention weight captured), median of 5, and the page's
//     time from the prompt edit to the analysis drawn;
//   - generation: 20 tokens, greedy, with the KV cache: tokens per second seen by the page
//     (each token shown in the prompt box and the link, as the reader sees it), and in the
//     worker's own time for the prompt's pass and the 20 steps (`Reply::Generated::ms`);
//   - peak memory: the largest VmHWM of Chromium's renderer processes.
// Run: node bench/gpt2.mjs   (after scripts/build.sh). Prints a table and writes
// bench/out/gpt2.json. Measurements, not pass/fail tests. BENCH_DIST=FOLDER measures another
// build (an older dist/ kept aside, to compare two builds back to back).
// BENCH_PERSISTENT=1 downloads the 124M model in a fresh profile on disk, where Cache Storage
// has room to keep it (an incognito context's quota refuses 500 MB), so the measured load
// includes storing the copy; the row then says whether a copy was kept.
// BENCH_ISOLATED=1 serves the book with the cross-origin isolation headers, so the page runs the
// threaded worker on every core (bench/threads.mjs compares); its results go to
// bench/out/gpt2-isolated.json; with BENCH_THREADS=N its pool has at most N threads (the same
// build on fewer threads), into bench/out/gpt2-isolatedN.json; BENCH_POOL=rayon runs rayon's
// pool instead of the hand-made one (gpt2-isolatedNrayon.json). BENCH_BUILD=plain refuses the
// threaded build's loader, so the page falls back on the single-threaded build (what a browser
// without relaxed SIMD runs), into bench/out/gpt2-plain.json.
// BENCH_BACKEND=webgpu runs the same on WebGPU (Chromium with --enable-unsafe-webgpu, which
// here is SwiftShader, a software adapter: a regression figure, not a GPU's speed), one run
// per prompt size, into bench/out/gpt2-webgpu.json.
// BENCH_FAMILY=llama measures the Llama family instead: the bundled "stories-llama" (4 layers,
// F16) and a random model of SmolLM2-135M's shape (BF16, written by `cargo run --example
// write_random_llama -- DIR smollm2`, served as the page's "smollm2" entry from 127.0.0.1),
// into bench/out/llama*.json; each model's row also gives the generation prompt's token count.
import fs from "node:fs";
import os from "node:os";
import { execFileSync } from "node:child_process";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, launchPersistent, newPage } from "../tests/browser/browser.mjs";
import { rendererPeakMb } from "./memory.mjs";

const root = new URL("..", import.meta.url).pathname;
const models = "/tmp/attention-live-test-models";
const llama = process.env.BENCH_FAMILY === "llama";
const [big, writer, ...args] = llama
  ? ["random-smollm2", "write_random_llama", "smollm2"]
  : ["random-124m", "write_random_gpt2"];
if (process.env.BENCH_MODELS !== "bundled" && !fs.existsSync(`${models}/${big}/model.safetensors`)) {
  const cmd = ["run", "--quiet", "--example", writer, "--", `${models}/${big}`, ...args];
  execFileSync("cargo", cmd, { cwd: root, stdio: "inherit" });
}
const isolated = process.env.BENCH_ISOLATED === "1";
const plain = process.env.BENCH_BUILD === "plain";
const { server, url } = await startServer(process.env.BENCH_DIST || `${root}dist`, 0, { isolated });
const hub = await startServer(models, 0, { cors: true });
const backend = process.env.BENCH_BACKEND === "webgpu" ? "webgpu" : "cpu";
const reps = backend === "webgpu" ? 1 : 5;
const browser = await launch(backend === "webgpu" ? ["--enable-unsafe-webgpu"] : []);
const results = { date: new Date().toISOString(), backend, machine: `${os.cpus().length} cores, ${os.cpus()[0].model}`, chromium: browser.version(), models: {} };


const state = (page) => page.$eval("#gpt2 .gpt2", (g) => ({ id: Number(g.dataset.analysis), ms: Number(g.dataset.computeMs), gen: Number(g.dataset.generateMs), genCompute: Number(g.dataset.generateComputeMs), status: g.dataset.status }));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function setPrompt(page, text) {
  const before = (await state(page)).id;
  const t0 = Date.now();
  await page.$eval("#gpt2 textarea", (t, v) => { t.value = v; t.dispatchEvent(new Event("input", { bubbles: true })); }, text);
  await page.waitForFunction((b) => Number(document.querySelector("#gpt2 .gpt2").dataset.analysis) > b, before, { timeout: 300000 });
  const tokens = await page.$$eval("#gpt2 .chips:not(.compare .chips) .chip", (c) => c.length);
  return { page_ms: Date.now() - t0, worker_ms: (await state(page)).ms, tokens };
}

async function run(name, link, download) {
  const viewport = { width: 1280, height: 900 };
  const profile = download && process.env.BENCH_PERSISTENT ? fs.mkdtempSync("/tmp/attention-live-bench-") : null;
  const persistent = profile && await launchPersistent(profile, { viewport });
  const page = persistent ? persistent.pages()[0] || await persistent.newPage() : await newPage(browser, { viewport });
  // BENCH_THREADS=N caps the threaded worker's pool, BENCH_POOL=rayon runs rayon's pool instead
  // of the hand-made one (the page's hooks, src/kit/worker.rs).
  for (const [key, value] of [["threads", process.env.BENCH_THREADS], ["pool", process.env.BENCH_POOL]]) {
    if (value) await page.addInitScript(([k, v]) => localStorage.setItem(`attention-live:${k}`, v), [key, value]);
  }
  if (plain) await page.route("**/gpt2-worker-mt_loader.js", (r) => r.fulfill({ status: 404, body: "not here" }));
  const t0 = Date.now();
  await page.goto(`${url}${link}&gpt2.backend=${backend}`);
  let tClick = t0;
  if (download) {
    await page.waitForSelector("#gpt2 .download-model");
    tClick = Date.now();
    await page.click("#gpt2 .download-model");
  }
  await page.waitForFunction(() => { const g = document.querySelector("#gpt2 .gpt2"); return g?.dataset.status === "ready" && Number(g.dataset.analysis) > 0; }, null, { timeout: 300000 });
  const r = { load_ms: Date.now() - tClick, ran_on: await page.$eval("#gpt2 .backend-status", (e) => e.textContent) };
  if (download) r.kept = /A copy is kept/.test(await page.$eval("#gpt2 .model-status", (e) => e.textContent));
  for (const n of [16, 128]) {
    const runs = [];
    for (let i = 0; i < reps; i++) runs.push(await setPrompt(page, Array.from({ length: n }, (_, k) => (k + i) % 2 ? " the" : " a").join("").trim()));
    const [worker_ms, page_ms] = [median(runs.map((x) => x.worker_ms)), median(runs.map((x) => x.page_ms))];
    r[`prompt_${n}`] = { worker_ms, page_ms, tokens: runs[0].tokens };
  }
  r.generate_prompt_tokens = (await setPrompt(page, "My cat is small, cute, and fluffy. She likes belly rubs.")).tokens;
  await page.click("#gpt2 .generate");
  await page.waitForFunction(() => Number(document.querySelector("#gpt2 .gpt2").dataset.generateMs) > 0, null, { timeout: 300000 });
  const done = await state(page);
  r.generate_tok_s = +(20 / (done.gen / 1000)).toFixed(1);
  r.generate_engine_tok_s = +(20 / (done.genCompute / 1000)).toFixed(1);
  r.renderer_peak_mb = rendererPeakMb();
  results.models[name] = r;
  await page.context().close();
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
}

// BENCH_MODELS=124m measures only the large model (the random 124M, or SmolLM2's shape);
// BENCH_MODELS=bundled only the bundled one.
const hubModel = `&gpt2.base=${encodeURIComponent(hub.url + `/${big}/`)}`;
const small = process.env.BENCH_MODELS !== "124m";
const large = process.env.BENCH_MODELS !== "bundled";
if (llama) {
  if (small) await run("stories-llama (bundled, 0.9M, F16)", "/gpt2-live/?gpt2.temperature=0&gpt2.model=stories-llama", false);
  if (large) await run("random SmolLM2-135M shape (BF16)", `/gpt2-live/?gpt2.temperature=0&gpt2.model=smollm2${hubModel}`, true);
} else {
  if (small) await run("stories (bundled, 7.2M, F16)", "/gpt2-live/?gpt2.temperature=0", false);
  if (large) await run("random GPT-2 124M (F32)", `/gpt2-live/?gpt2.temperature=0&gpt2.model=url${hubModel}`, true);
}

console.log(`backend: ${backend}; ${Object.values(results.models)[0]?.ran_on}`);
console.log("| model | load | prompt 16 tok (worker / page) | prompt 128 tok (worker / page) | generate tok/s (worker / page) | renderer peak |");
console.log("|---|---|---|---|---|---|");
for (const [name, r] of Object.entries(results.models)) {
  console.log(`| ${name}${r.kept === undefined ? "" : r.kept ? ", copy kept" : ", no copy kept"} | ${r.load_ms} ms | ${r.prompt_16.worker_ms} / ${r.prompt_16.page_ms} ms | ${r.prompt_128.worker_ms} / ${r.prompt_128.page_ms} ms | ${r.generate_engine_tok_s} / ${r.generate_tok_s} | ${r.renderer_peak_mb} MB |`);
}
fs.mkdirSync(new URL("./out", import.meta.url), { recursive: true });
const variant = (isolated ? `-isolated${process.env.BENCH_THREADS || ""}${process.env.BENCH_POOL || ""}` : "")
  + (plain ? "-plain" : "");
const out = (llama ? "llama" : "gpt2") + (backend === "webgpu" ? "-webgpu" : variant);
fs.writeFileSync(new URL(`./out/${out}.json`, import.meta.url), JSON.stringify(results, null, 2));
await browser.close();
server.close();
hub.server.close();
