// Benchmark of the training lab, in headless Chromium on this machine, against the build in dist/:
//   1. steps per second of the page's engine in the compute worker on the fixed configuration
//      2 layers, 4 heads, width 64, T = 32 (copy, n = 16), batch 32, MLP on, learned positions:
//      on one thread (the page as a first visit gets it: the threaded build, not isolated), on
//      every core (served with the isolation headers the service worker adds), and the
//      single-threaded build (a browser without relaxed SIMD); then PyTorch eager on the same CPU
//      with one thread and with as many as ours (bench/pytorch_train.py), back to back, ROUNDS
//      times (default 3); the ratios ours / PyTorch at equal threads per round;
//   2. wall time in the page from pressing Train to "solved" (the loss averaged over 20 steps
//      under 0.5) at the lab's default settings, median of 3 runs (SOLVED=0 skips it).
// Run: node bench/train.mjs [OTHER_DIST]   (after scripts/build.sh; with OTHER_DIST, part 1 also
// measures that build's page on one thread and on every core in each round, back to back: e.g.
// the build before a change). PyTorch from $TORCH_PYTHON, else /work/venv-torch/bin/python, else `python3`;
// without torch, part 1 prints our figures alone.
// Prints a table and writes bench/out/train.json. Measurements, not pass/fail tests.
import fs from "node:fs";
import os from "node:os";
import { execFileSync } from "node:child_process";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";

const ROUNDS = Number(process.env.ROUNDS || 3);
const cores = Math.min(os.availableParallelism(), 8);
const dist = new URL("../dist", import.meta.url).pathname;
const { server, url } = await startServer(dist);
const isolated = await startServer(dist, 0, { isolated: true });
const other = process.argv[2] ? await startServer(process.argv[2]) : null;
const otherIsolated = process.argv[2] ? await startServer(process.argv[2], 0, { isolated: true }) : null;
const browser = await launch();
const results = {
  date: new Date().toISOString(),
  machine: `${os.cpus().length} cores, ${os.cpus()[0].model}`,
  chromium: browser.version(),
};

const status = (page) =>
  page.$eval(".train-status", (e) => ({ phase: e.dataset.phase, step: +e.dataset.step, solved: e.dataset.solvedMs }));

// Steps per second between step 20 and the end of a 220-step run (the first steps include the
// worker's start). build "plain": the threaded build's loader refused, so the single-threaded
// build runs.
async function ours(url, build = "") {
  const q = "task=copy&n=16&layers=2&heads=4&width=64&mlp=true&pos=learned&lr=0.001&batch=32&steps=220";
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  if (build === "plain") await page.route("**/gpt2-worker-mt_loader.js", (r) => r.fulfill({ status: 404, body: "" }));
  await page.goto(`${url}/training/?${q.split("&").map((kv) => "train-lab." + kv).join("&")}`);
  await page.waitForSelector(".train-main");
  await page.click(".train-main");
  let first = null;
  for (;;) {
    await page.waitForTimeout(100);
    const s = await status(page);
    if (!first && s.step >= 20) first = { t: performance.now(), step: s.step };
    if (s.phase !== "training") {
      const t = performance.now();
      await page.close();
      return ((s.step - first.step) / (t - first.t)) * 1e3;
    }
  }
}

function pytorch(threads) {
  const candidates = [process.env.TORCH_PYTHON, "/work/venv-torch/bin/python", "python3"].filter(Boolean);
  for (const py of candidates) {
    try {
      const out = execFileSync(py, [new URL("./pytorch_train.py", import.meta.url).pathname, "--threads", String(threads), "--steps", "100"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      });
      const json = out.split("\n").find((l) => l.startsWith("{"));
      return JSON.parse(json);
    } catch {}
  }
  return null;
}

const rounds = [];
const f = (v) => (v ? v.toFixed(1) : "–");
const x = (a, b) => (a && b ? (a / b).toFixed(2) : "–");
console.log(`| round | ours, 1 thread | ours, ${cores} threads | single-threaded build | PyTorch, 1 thread | ` +
  `PyTorch, ${cores} threads | ours / PyTorch, 1 thread | ours / PyTorch, ${cores} threads |`);
console.log("|---|---|---|---|---|---|---|---|");
for (let r = 0; r < ROUNDS; r++) {
  const one = await ours(url);
  const many = await ours(isolated.url);
  const plain = await ours(url, "plain");
  if (other) {
    const [a, b] = [await ours(other.url), await ours(otherIsolated.url)];
    console.log(`round ${r + 1}: ${process.argv[2]}: ${a.toFixed(1)} steps/s on 1 thread, ${b.toFixed(1)} on ${cores}`);
  }
  const torch1 = pytorch(1)?.steps_per_s ?? null;
  const torchN = pytorch(cores)?.steps_per_s ?? null;
  rounds.push({ ours_1: one, ours_n: many, plain, pytorch_1: torch1, pytorch_n: torchN, threads: cores });
  console.log(`| ${r + 1} | ${f(one)} | ${f(many)} | ${f(plain)} | ${f(torch1)} | ${f(torchN)} | ${x(one, torch1)} | ${x(many, torchN)} |`);
}
results.steps = rounds;

// Time to solved at the defaults.
const solved = [];
for (let r = 0; r < (process.env.SOLVED === "0" ? 0 : 3); r++) {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${url}/training/`);
  await page.waitForSelector(".train-main");
  await page.click(".train-main");
  let s;
  do {
    await page.waitForTimeout(250);
    s = await status(page);
  } while (s.phase === "training" && !s.solved);
  solved.push(s.solved ? +s.solved / 1e3 : null);
  console.log(`defaults, run ${r + 1}: solved after ${s.solved ? (+s.solved / 1e3).toFixed(1) + " s" : "never"} (step ${s.step})`);
  await page.close();
}
const times = solved.filter((x) => x !== null).sort((a, b) => a - b);
results.solved_s = solved;
console.log(`median time to solved at the defaults: ${times.length ? times[Math.floor(times.length / 2)].toFixed(1) + " s" : "never"}`);
fs.mkdirSync(new URL("./out", import.meta.url), { recursive: true });
fs.writeFileSync(new URL("./out/train.json", import.meta.url), JSON.stringify(results, null, 2));
await browser.close();
server.close();
isolated.server.close();
other?.server.close();
otherIsolated?.server.close();
