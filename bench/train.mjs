// Benchmark of the training lab, in headless Chromium on this machine, against the build in dist/:
//   1. steps per second of the page's engine (in the compute worker, one thread) on the fixed
//      configuration 2 layers, 4 heads, width 64, T = 32 (copy, n = 16), batch 32, MLP on, learned
//      positions; then PyTorch eager on the same CPU with one thread (bench/pytorch_train.py),
//      back to back, ROUNDS times alternating; the ratio ours / PyTorch per round;
//   2. wall time in the page from pressing Train to "solved" (the loss averaged over 20 steps
//      under 0.5) at the lab's default settings, median of 3 runs.
// Run: node bench/train.mjs [OTHER_DIST]   (after scripts/build.sh; with OTHER_DIST, part 1 also
// measures that build's page in each round, back to back: e.g. a build of another profile).
// PyTorch from $TORCH_PYTHON, else
// /work/venv-torch/bin/python, else `python3`; without torch, part 1 prints our figure alone).
// Prints a table and writes bench/out/train.json. Measurements, not pass/fail tests.
import fs from "node:fs";
import os from "node:os";
import { execFileSync } from "node:child_process";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";

const ROUNDS = 3;
const dist = new URL("../dist", import.meta.url).pathname;
const { server, url } = await startServer(dist);
const other = process.argv[2] ? await startServer(process.argv[2]) : null;
const browser = await launch();
const results = {
  date: new Date().toISOString(),
  machine: `${os.cpus().length} cores, ${os.cpus()[0].model}`,
  chromium: browser.version(),
};

const status = (page) =>
  page.$eval(".train-status", (e) => ({ phase: e.dataset.phase, step: +e.dataset.step, solved: e.dataset.solvedMs }));

// Steps per second between step 20 and the end of a 220-step run (the first steps include the
// worker's start).
async function ours(url) {
  const q = "task=copy&n=16&layers=2&heads=4&width=64&mlp=true&pos=learned&lr=0.001&batch=32&steps=220";
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
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

function pytorch() {
  const candidates = [process.env.TORCH_PYTHON, "/work/venv-torch/bin/python", "python3"].filter(Boolean);
  for (const py of candidates) {
    try {
      const out = execFileSync(py, [new URL("./pytorch_train.py", import.meta.url).pathname, "--threads", "1", "--steps", "100"], {
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
for (let r = 0; r < ROUNDS; r++) {
  const a = await ours(url);
  if (other) console.log(`round ${r + 1}: ${process.argv[2]}: ${(await ours(other.url)).toFixed(1)} steps/s`);
  const p = pytorch();
  const torch = p ? p.steps_per_s : null;
  rounds.push({ ours: a, pytorch: torch, ratio: torch ? a / torch : null });
  console.log(
    `round ${r + 1}: page engine ${a.toFixed(1)} steps/s` +
      (torch ? `, PyTorch eager (1 thread) ${torch.toFixed(1)} steps/s, ratio ${(a / torch).toFixed(2)}` : ", PyTorch not found"),
  );
}
results.steps = rounds;

// Time to solved at the defaults.
const solved = [];
for (let r = 0; r < 3; r++) {
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
other?.server.close();
