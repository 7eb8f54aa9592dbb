// The book's CPU engine against ONNX Runtime Web on the same random-init GPT-2 small, in the
// same headless Chromium, one thread each: runs bench/onnx.mjs and bench/gpt2.mjs (124M only)
// back to back, ROUNDS times alternating (default 2: this machine's timings drift by 20% or more
// from minute to minute), and prints each round's ratio ONNX Runtime / ours (> 1: ours faster).
// Needs the ONNX export and onnxruntime-web (see bench/onnx.mjs) and the release build in dist/.
// Run: node bench/vs-onnx.mjs
// BENCH_FAMILY=llama: the Llama family instead, both models of `BENCH_FAMILY=llama node
// bench/gpt2.mjs` (the bundled stories-llama and SmolLM2-135M's shape) against their exports
// (`python bench/export_onnx_llama.py`, see there), with decoding (tokens per second over the
// same prompt length and 20 greedy steps with the KV cache: ours in the worker's own time, and
// as the page shows it, each token posted to the page and shown there), load and the
// renderer's peak too;
// BENCH_FAMILY=marian: the translation demo's two models (bench/translation.mjs: the bundled
// dates model and OPUS-MT en-de's shape) against their exports (bench/onnx_marian.mjs, which runs
// as many source and target tokens as the page's translation had), greedy and with 4 beams,
// one thread each: tokens per second of the search (the same work on both sides), and ours for
// the whole query, which also runs the pass that captures every attention for the page;
// BENCH_FAMILY=vit: the vision demo's two models (bench/vision.mjs: the bundled six-shapes ViT
// and DeiT-tiny's shape, on the CPU) against their exports (bench/onnx_vit.mjs), one thread each
// (THREADS is not read here):
// load, and one picture's pass with every layer's attention (ours: the worker's time for the
// whole picture, preprocessing included; and as the page shows it, to the maps drawn);
// ratios > 1 mean ours is faster (or smaller). THREADS=N runs both on N threads (ours with the
// isolation headers and its pool capped at N, as bench/threads.mjs does); default 1.
import fs from "node:fs";
import { execFileSync } from "node:child_process";

const here = new URL(".", import.meta.url).pathname;
const read = (f) => JSON.parse(fs.readFileSync(`${here}out/${f}`, "utf8"));
const rounds = Number(process.env.ROUNDS || 2);
const threads = Number(process.env.THREADS || 1);
const llama = process.env.BENCH_FAMILY === "llama";
const marian = process.env.BENCH_FAMILY === "marian";
const vit = process.env.BENCH_FAMILY === "vit";
const oursEnv = threads > 1
  ? { ...process.env, BENCH_ISOLATED: "1", BENCH_THREADS: String(threads) }
  : { ...process.env, BENCH_ISOLATED: "0" };
const oursFile = `${llama ? "llama" : "gpt2"}${threads > 1 ? `-isolated${threads}` : ""}.json`;
const ort = (model, genPrompt) => {
  const env = { ...process.env, ORT_THREADS: String(threads), ORT_MODEL: model, ORT_GEN_PROMPT: String(genPrompt ?? 16) };
  execFileSync("node", [`${here}onnx.mjs`], { stdio: "ignore", env });
  return read(model === "gpt2" ? "onnx.json" : `onnx-${model}.json`);
};
const x = (a, b) => `${(a / b).toFixed(2)}×`;

if (vit) {
  console.log("1 thread each; each cell: ONNX Runtime Web / ours (ratio, > 1: ours faster or smaller)");
  console.log("| round | model | load | a picture's pass | ours, to the maps drawn | renderer peak |");
  console.log("|---|---|---|---|---|---|");
  for (let i = 1; i <= rounds; i++) {
    execFileSync("node", [`${here}vision.mjs`], { stdio: "ignore" });
    const [shapes, deit] = Object.entries(read("vision.json").models);
    for (const [model, [name, r]] of [["shapes-vit", shapes], ["deit-tiny", deit]]) {
      execFileSync("node", [`${here}onnx_vit.mjs`], { stdio: "ignore", env: { ...process.env, ORT_THREADS: "1", ORT_MODEL: model } });
      const o = read(`onnx-vit-${model}.json`);
      const cell = (a, b, unit) => `${a} / ${b}${unit} (${x(a, b)})`;
      console.log(`| ${i} | ${name} | ${cell(o.load_ms, r.load_ms, " ms")} | ${cell(o.run_ms, r.worker_ms, " ms")} | ` +
        `${r.page_ms} ms | ${cell(o.renderer_peak_mb, r.renderer_peak_mb, " MB")} |`);
    }
  }
} else if (marian) {
  console.log("1 thread each; each cell: ONNX Runtime Web / ours (ratio, > 1: ours faster or smaller)");
  console.log("| round | model | tokens | greedy tok/s | 4 beams tok/s | ours, whole query: greedy, 4 beams | renderer peak |");
  console.log("|---|---|---|---|---|---|---|");
  for (let i = 1; i <= rounds; i++) {
    execFileSync("node", [`${here}translation.mjs`], { stdio: "ignore" });
    const [dates, opus] = Object.entries(read("translation.json").models);
    for (const [model, [name, r]] of [["dates", dates], ["opus", opus]]) {
      const env = { ...process.env, ORT_THREADS: "1", ORT_MODEL: model, ORT_SOURCE: String(r.source_tokens),
        ORT_STEPS: String(r.beams_1.tokens), ORT_BEAM_STEPS: String(r.beams_4.tokens) };
      execFileSync("node", [`${here}onnx_marian.mjs`], { stdio: "ignore", env });
      const o = read(`onnx-marian-${model}.json`);
      const up = (a, b) => `${a} / ${b} (${x(b, a)})`;
      console.log(`| ${i} | ${name} | ${r.source_tokens} → ${r.beams_1.tokens} | ` +
        `${up(o.beams_1.tok_s, r.beams_1.search_tok_s)} | ${up(o.beams_4.tok_s, r.beams_4.search_tok_s)} | ` +
        `${r.beams_1.tok_s}, ${r.beams_4.tok_s} | ` +
        `${o.renderer_peak_mb} / ${r.renderer_peak_mb} MB (${x(o.renderer_peak_mb, r.renderer_peak_mb)}) |`);
    }
  }
} else if (!llama) {
  console.log("| round | ORT 16 tok | ours 16 tok | ratio | ORT 128 tok | ours 128 tok | ratio |");
  console.log("|---|---|---|---|---|---|---|");
  for (let i = 1; i <= rounds; i++) {
    const o = ort("gpt2");
    execFileSync("node", [`${here}gpt2.mjs`], { stdio: "ignore", env: { ...oursEnv, BENCH_MODELS: "124m" } });
    const ours = Object.values(read(oursFile).models)[0];
    const row = [16, 128].map((t) => [o[`prompt_${t}_ms`], ours[`prompt_${t}`].worker_ms]);
    console.log(`| ${i} | ${row.map(([a, b]) => `${a} ms | ${b} ms | ${x(a, b)}`).join(" | ")} |`);
  }
} else {
  console.log(`${threads} thread${threads > 1 ? "s" : ""} each; each cell: ONNX Runtime Web / ours ` +
    "(ratio, > 1: ours faster or smaller)");
  console.log("| round | model | prompt 16 tok | prompt 128 tok | decode tok/s | decode, as the page shows it | load | renderer peak |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (let i = 1; i <= rounds; i++) {
    // Ours first: the ONNX run generates after a prompt as long as ours was.
    execFileSync("node", [`${here}gpt2.mjs`], { stdio: "ignore", env: { ...oursEnv, BENCH_FAMILY: "llama" } });
    const [small, big] = Object.entries(read(oursFile).models);
    for (const [model, [name, r]] of [["stories-llama", small], ["smollm2", big]]) {
      const o = ort(model, r.generate_prompt_tokens);
      const cell = (a, b, unit, up = false) => `${a} / ${b}${unit} (${up ? x(b, a) : x(a, b)})`;
      console.log(`| ${i} | ${name} | ${cell(o.prompt_16_ms, r.prompt_16.worker_ms, " ms")} | ` +
        `${cell(o.prompt_128_ms, r.prompt_128.worker_ms, " ms")} | ${cell(o.generate_tok_s, r.generate_engine_tok_s, "", true)} | ` +
        `${cell(o.generate_tok_s, r.generate_tok_s, "", true)} | ` +
        `${cell(o.load_ms, r.load_ms, " ms")} | ${cell(o.renderer_peak_mb, r.renderer_peak_mb, " MB")} |`);
      const tokens = `prompts ${r.prompt_16.tokens} and ${r.prompt_128.tokens}, generation prompt ${r.generate_prompt_tokens}`;
      if (i === 1) console.log(`|   | (tokens: ${tokens}) | | | | | | |`);
    }
  }
}
