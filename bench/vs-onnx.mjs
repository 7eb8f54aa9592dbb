// The book's CPU engine against ONNX Runtime Web on the same random-init GPT-2 small, in the
// same headless Chromium, one thread each: runs bench/onnx.mjs and bench/gpt2.mjs (124M only)
// back to back, ROUNDS times alternating (default 2: this machine's timings drift by 20% or more
// from minute to minute), and prints each round's ratio ONNX Runtime / ours (> 1: ours faster).
// Needs the ONNX export and onnxruntime-web (see bench/onnx.mjs) and the release build in dist/.
// Run: node bench/vs-onnx.mjs
import fs from "node:fs";
import { execFileSync } from "node:child_process";

const here = new URL(".", import.meta.url).pathname;
const read = (f) => JSON.parse(fs.readFileSync(`${here}out/${f}`, "utf8"));
const rounds = Number(process.env.ROUNDS || 2);
console.log("| round | ORT 16 tok | ours 16 tok | ratio | ORT 128 tok | ours 128 tok | ratio |");
console.log("|---|---|---|---|---|---|---|");
for (let i = 1; i <= rounds; i++) {
  execFileSync("node", [`${here}onnx.mjs`], { stdio: "ignore" });
  execFileSync("node", [`${here}gpt2.mjs`], { stdio: "ignore", env: { ...process.env, BENCH_MODELS: "124m" } });
  const ort = read("onnx.json");
  const ours = Object.values(read("gpt2.json").models)[0];
  const row = [16, 128].map((t) => [ort[`prompt_${t}_ms`], ours[`prompt_${t}`].worker_ms]);
  console.log(`| ${i} | ${row.map(([a, b]) => `${a} ms | ${b} ms | ${(a / b).toFixed(2)}×`).join(" | ")} |`);
}
