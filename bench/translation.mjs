// The translation demo's model in headless Chromium on this machine, against the release build in
// dist/: the bundled dates model, and a random-init model of OPUS-MT English→German's shape
// (F32, about 300 MB, written by `cargo run --example write_random_marian` into /tmp and served
// from 127.0.0.1 as the folder of the demo's "English → German, OPUS-MT" entry):
//   - load: navigation (bundled) or the Download click (OPUS-MT's shape) to the model ready;
//   - translation of a sentence, greedy and with 4 beams: the worker's time for the whole query
//     (the search, then the pass that captures every attention for the page) and for the search
//     alone, median of 3, and the target tokens written per second of each;
//   - peak memory: the largest VmHWM of Chromium's renderer processes (the page and its worker).
// Run: node bench/translation.mjs   (after scripts/build.sh). Prints a table and writes
// bench/out/translation.json. Measurements, not pass/fail tests. BENCH_DIST=FOLDER measures
// another build.
import fs from "node:fs";
import os from "node:os";
import { execFileSync } from "node:child_process";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";
import { rendererPeakMb } from "./memory.mjs";

const root = new URL("..", import.meta.url).pathname;
const models = "/tmp/attention-live-test-marian";
const big = "random-opus-mt-en-de";
if (!fs.existsSync(`${models}/${big}/vocab.json`)) {
  execFileSync("cargo", ["run", "--quiet", "--example", "write_random_marian", "--", `${models}/${big}`],
    { cwd: root, stdio: "inherit" });
}
const { server, url } = await startServer(process.env.BENCH_DIST || `${root}dist`, 0);
const hub = await startServer(models, 0, { cors: true });
const results = { date: new Date().toISOString(), machine: `${os.cpus().length} cores, ${os.cpus()[0].model}`, models: {} };
// About twenty words of English (the dates model gets a date of its own).
const SENTENCE = "The quick brown fox jumps over the lazy dog while the farmer watches from the porch and drinks his coffee.";
const DATE = "the twenty-third of march, nineteen ninety-eight";
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const state = (page) => page.$eval("#translation .translation", (e) =>
  ({ id: Number(e.dataset.id), ms: Number(e.dataset.computeMs), search: Number(e.dataset.searchMs), tokens: Number(e.dataset.tokens),
    source: Number(e.dataset.sourceTokens) }));

// Waits for a translation newer than `before` and returns it.
async function next(page, before) {
  await page.waitForFunction((b) => Number(document.querySelector("#translation .translation").dataset.id) > b, before, { timeout: 600000 });
  return state(page);
}

// Sets the beams (a slider) and waits for the translation that asks for.
async function setBeams(page, beams) {
  const before = (await state(page)).id;
  const changed = await page.$eval("#translation-beams", (e, v) => {
    if (e.value === String(v)) return false;
    e.value = String(v); e.dispatchEvent(new Event("input", { bubbles: true }));
    return true;
  }, beams);
  if (changed) await next(page, before);
}

// Translates `text` (the box changed, so the demo asks the worker).
async function translate(page, text) {
  const before = (await state(page)).id;
  await page.$eval("#translation-text", (e, v) => { e.value = v; e.dispatchEvent(new Event("input", { bubbles: true })); }, text);
  return next(page, before);
}

for (const [name, query, download, text] of [
  ["dates (bundled, 1.0 M parameters, F16)", "", false, DATE],
  ["OPUS-MT en-de shape (73.9 M parameters, F32)", `?translation.model=opus-mt-en-de&translation.base=${encodeURIComponent(`${hub.url}/${big}/`)}`, true, SENTENCE],
]) {
  const browser = await launch();
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  const t0 = Date.now();
  await page.goto(`${url}/why-attention/${query}#translation`);
  if (download) {
    await page.waitForSelector("#translation button.download", { timeout: 60000 });
    await page.click("#translation button.download");
  }
  await page.waitForFunction(() => document.querySelector("#translation .translation-status")?.dataset.status === "ready", null, { timeout: 600000 });
  const load_ms = Date.now() - t0;
  const row = { load_ms };
  for (const beams of [1, 4]) {
    const runs = [];
    await setBeams(page, beams);
    for (let i = 0; i < 3; i++) {
      await translate(page, `${text} `); // another text first, so that the next is asked anew
      runs.push(await translate(page, text));
    }
    const ms = median(runs.map((r) => r.ms));
    const search = median(runs.map((r) => r.search));
    row[`beams_${beams}`] = { ms: Math.round(ms), search_ms: Math.round(search), tokens: runs[0].tokens,
      tok_s: +(runs[0].tokens / (ms / 1000)).toFixed(1), search_tok_s: +(runs[0].tokens / (search / 1000)).toFixed(1) };
    row.source_tokens = runs[0].source;
  }
  row.renderer_peak_mb = rendererPeakMb();
  results.models[name] = row;
  await browser.close();
}
server.close(); hub.server.close();
fs.mkdirSync(`${root}bench/out`, { recursive: true });
fs.writeFileSync(`${root}bench/out/translation.json`, JSON.stringify(results, null, 1));
console.log(`${results.machine}, ${results.date}`);
console.log("| model | load | greedy: time (search), tokens, tok/s (search) | 4 beams: the same | renderer peak |");
console.log("|---|---|---|---|---|");
for (const [name, r] of Object.entries(results.models)) {
  const b = (x) => `${x.ms} ms (${x.search_ms}), ${x.tokens}, ${x.tok_s} (${x.search_tok_s})`;
  console.log(`| ${name} | ${r.load_ms} ms | ${b(r.beams_1)} | ${b(r.beams_4)} | ${r.renderer_peak_mb} MB |`);
}
