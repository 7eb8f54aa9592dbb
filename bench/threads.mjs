// One thread against every core, for the book's CPU engine and for ONNX Runtime Web, on the same
// random-init GPT-2 small in the same headless Chromium, back to back, ROUNDS times (default 2:
// this machine's timings drift from minute to minute, so compare ratios within a round).
// Ours: the server sends the isolation headers the service worker adds (static/sw.js), so the
// threaded worker runs (scripts/build_threads.sh), once capped at one thread (the page's hook
// `localStorage["attention-live:threads"]`) and once on every core: the same build both times.
// Also the page as a first visit gets it (not isolated: the same threaded build, on one thread),
// and the single-threaded build a browser without relaxed SIMD runs (its products do not fuse
// their multiply-adds), for reference.
// Needs the release build in dist/, and for ONNX Runtime Web its export (see bench/onnx.mjs).
// Run: node bench/threads.mjs   Prints a table; the last round's figures go to bench/out/threads.json.
import fs from "node:fs";
import os from "node:os";
import { execFileSync } from "node:child_process";

const here = new URL(".", import.meta.url).pathname;
const read = (f) => JSON.parse(fs.readFileSync(`${here}out/${f}`, "utf8"));
const rounds = Number(process.env.ROUNDS || 2);
const cores = Math.min(os.availableParallelism(), 8);
const withOrt = fs.existsSync("/tmp/attention-live-test-models/onnx/gpt2.onnx") && fs.existsSync(`${here}../node_modules/onnxruntime-web`);
if (!withOrt) console.log("(ONNX Runtime Web skipped: run the setup in bench/onnx.mjs)");

/// threads: undefined for the page without isolation, else the pool's cap; pool: "rayon" or "";
/// build: "plain" for the single-threaded build (without isolation).
function ours(threads, pool = "", build = "") {
  const env = {
    ...process.env, BENCH_MODELS: "124m", BENCH_ISOLATED: threads ? "1" : "0", BENCH_THREADS: threads ? String(threads) : "",
    BENCH_POOL: pool, BENCH_BUILD: build,
  };
  execFileSync("node", [`${here}gpt2.mjs`], { stdio: "ignore", env });
  const r = Object.values(read(threads ? `gpt2-isolated${threads}${pool}.json` : `gpt2${build ? "-" + build : ""}.json`).models)[0];
  return { p16: r.prompt_16.worker_ms, p128: r.prompt_128.worker_ms, tok_s: r.generate_tok_s, load_ms: r.load_ms, ran_on: r.ran_on };
}
function ort(threads) {
  if (!withOrt) return null;
  execFileSync("node", [`${here}onnx.mjs`], { stdio: "ignore", env: { ...process.env, ORT_THREADS: String(threads) } });
  const r = read("onnx.json");
  return { p16: r.prompt_16_ms, p128: r.prompt_128_ms, load_ms: r.load_ms };
}

const x = (a, b) => (a && b ? `${(a / b).toFixed(2)}×` : "–");
console.log(`| round | engine | threads | prompt 16 tok | prompt 128 tok | decode tok/s | load |`);
console.log("|---|---|---|---|---|---|---|");
let last;
for (let i = 1; i <= rounds; i++) {
  const r = { plain: ours(undefined, "", "plain"), first: ours(undefined), ours1: ours(1), ort1: ort(1), oursN: ours(cores), rayonN: ours(cores, "rayon"), ortN: ort(cores) };
  for (const [engine, threads, v] of [["ours, single-threaded build (no relaxed SIMD)", 1, r.plain],
    ["ours, not isolated (first visit)", 1, r.first], ["ours", 1, r.ours1],
    ["ONNX Runtime Web", 1, r.ort1], ["ours", cores, r.oursN], ["ours, rayon's pool", cores, r.rayonN], ["ONNX Runtime Web", cores, r.ortN]]) {
    if (v) console.log(`| ${i} | ${engine} | ${threads} | ${v.p16} ms | ${v.p128} ms | ${v.tok_s ?? "–"} | ${v.load_ms} ms |`);
  }
  console.log(`| ${i} | ratios | | ours ${cores}t / 1t: ${x(r.ours1.p16, r.oursN.p16)} (16), ${x(r.ours1.p128, r.oursN.p128)} (128), ` +
    `${x(r.oursN.tok_s, r.ours1.tok_s)} (decode); rayon's pool: ${x(r.ours1.p16, r.rayonN.p16)}, ${x(r.ours1.p128, r.rayonN.p128)} | ` +
    `ORT / ours, 1t: ${x(r.ort1?.p16, r.ours1.p16)}, ${x(r.ort1?.p128, r.ours1.p128)} | ` +
    `ORT / ours, ${cores}t: ${x(r.ortN?.p16, r.oursN.p16)}, ${x(r.ortN?.p128, r.oursN.p128)} | ` +
    `first visit / 1t: ${x(r.first.p16, r.ours1.p16)}, ${x(r.first.p128, r.ours1.p128)}; ` +
    `single-threaded build / 1t: ${x(r.plain.p16, r.ours1.p16)}, ${x(r.plain.p128, r.ours1.p128)} |`);
  last = r;
}
console.log(`ours, ${cores} threads: ${last.oursN.ran_on}`);
fs.writeFileSync(`${here}out/threads.json`, JSON.stringify({ date: new Date().toISOString(), cores, ...last }, null, 2));
