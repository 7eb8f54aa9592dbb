// The GPT-2 chapter on WebGPU in the real page. Headless Chromium with --enable-unsafe-webgpu
// offers a SwiftShader adapter (a GPU in software: right for correctness, meaningless for
// speed); without the flag it offers none. Checked here: the model runs on WebGPU and answers
// as the CPU does, the backend indicator and control work and live in the URL, a missing
// adapter and a forced GPU failure both fall back to the CPU with a message, and the demo keeps
// working after the failure. The translation demo (why-attention) likewise: its model translates on
// WebGPU as on the CPU, and a forced failure moves it to the CPU with a notice.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  launch, newPage, openPage, settledUrl, serveBook, closeBook, DESKTOP, gpt2Analysed as analysed,
  gpt2BackendLine as line, gpt2Generate,
} from "../browser.mjs";

let server, base, gpuBrowser, plainBrowser;
before(async () => {
  ({ server, base, browser: plainBrowser } = await serveBook());
  gpuBrowser = await launch(["--enable-unsafe-webgpu"]);
});
after(async () => { await gpuBrowser?.close(); await closeBook({ server, browser: plainBrowser }); });

/// Opens the chapter at `query` in `browser` (`init` runs first) and waits for an analysis on a
/// known backend.
const open = (browser, query = "", init) =>
  openPage(browser, `${base}/gpt2-live/${query}`, DESKTOP, { wait: (page) => analysed(page), init });

const backend = (page) => page.$eval("#gpt2 .gpt2", (g) => g.dataset.backend);
const answer = (page) => page.evaluate(() => ({
  next: [...document.querySelectorAll("#gpt2 .next-list:not(.short) li")].map((li) => li.textContent),
  w: [...document.querySelectorAll("#gpt2 .chip")].map((c) => Number(c.style.getPropertyValue("--w"))),
}));

test("with WebGPU the model runs on the GPU and answers as the CPU does", async () => {
  // SwiftShader is a software adapter: "automatic" keeps the (faster) CPU and says why.
  const auto = await open(gpuBrowser);
  assert.equal(await backend(auto), "cpu");
  assert.match(await line(auto), /software fallback, slower than the CPU; choose WebGPU to use it anyway/);
  await auto.context().close();
  const gpu = await open(gpuBrowser, "?gpt2.temperature=0&gpt2.backend=webgpu");
  assert.equal(await backend(gpu), "webgpu");
  assert.match(await line(gpu), /^Running on: WebGPU \(.*software fallback/);
  const cpu = await open(gpuBrowser, "?gpt2.temperature=0&gpt2.backend=cpu");
  assert.equal(await backend(cpu), "cpu");
  assert.match(await line(cpu), /CPU \(chosen in the page; 1 thread[^)]*\)/);
  const [a, b] = [await answer(gpu), await answer(cpu)];
  assert.equal(a.next.length, 10);
  assert.deepEqual(a.next, b.next, "the same next-token list, to the displayed digit");
  assert.ok(a.w.length > 5 && a.w.some((x) => x > 0.5), "the chips carry the head's weights");
  a.w.forEach((x, i) => assert.ok(Math.abs(x - b.w[i]) < 1e-3, `chip ${i}: ${x} vs ${b.w[i]}`));
  // Greedy generation on both backends writes the same continuation.
  const [ta, tb] = [await gpt2Generate(gpu), await gpt2Generate(cpu)];
  assert.ok(ta.length > 15, ta);
  assert.equal(ta, tb);
  assert.deepEqual([...gpu.errors, ...cpu.errors], []);
  await gpu.context().close(); await cpu.context().close();
});

test("the backend control switches the backend and lives in the URL", async () => {
  const page = await open(gpuBrowser);
  assert.equal(await backend(page), "cpu");
  assert.equal(new URL(await settledUrl(page)).searchParams.get("gpt2.backend"), null, "the default stays out of the URL");
  let id = await page.$eval("#gpt2 .gpt2", (g) => Number(g.dataset.analysis));
  await page.selectOption("#gpt2-backend", "webgpu");
  await page.waitForFunction(() => document.querySelector("#gpt2 .gpt2").dataset.backend === "webgpu");
  id = await analysed(page, id);
  assert.equal(new URL(await settledUrl(page)).searchParams.get("gpt2.backend"), "webgpu");
  await page.selectOption("#gpt2-backend", "cpu");
  await page.waitForFunction(() => document.querySelector("#gpt2 .gpt2").dataset.backend === "cpu");
  await analysed(page, id);
  assert.equal(new URL(await settledUrl(page)).searchParams.get("gpt2.backend"), "cpu");
  // The link restores the choice in a fresh page.
  const fresh = await newPage(gpuBrowser);
  await fresh.goto(await settledUrl(page));
  await analysed(fresh);
  assert.equal(await backend(fresh), "cpu");
  assert.equal(await fresh.$eval("#gpt2-backend", (s) => s.value), "cpu");
  assert.deepEqual([...page.errors, ...fresh.errors], []);
  await page.context().close(); await fresh.context().close();
});

test("f16 weights, asked for, are used or the backend line says why not", async () => {
  // The induction model is F16 on disk; SwiftShader may or may not offer shader-f16.
  const page = await open(gpuBrowser, "?gpt2.backend=webgpu-f16&gpt2.model=induction");
  assert.equal(await backend(page), "webgpu");
  assert.match(await line(page), /, f16 weights|no shader-f16/);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("without a WebGPU adapter the page says so and runs on the CPU", async () => {
  const auto = await open(plainBrowser);
  assert.equal(await backend(auto), "cpu");
  assert.match(await line(auto), /CPU \(this browser offers no WebGPU adapter; 1 thread[^)]*\)/);
  const forced = await open(plainBrowser, "?gpt2.backend=webgpu");
  assert.equal(await backend(forced), "cpu");
  assert.match(await line(forced), /WebGPU was asked for, but this browser offers no WebGPU adapter/);
  assert.equal((await answer(forced)).next.length, 10, "the demo works on the CPU");
  assert.deepEqual([...auto.errors, ...forced.errors], []);
  await auto.context().close(); await forced.context().close();
});

test("a GPU failure falls back to the CPU with a notice, and the demo keeps working", async () => {
  const want = await answer(await open(gpuBrowser, "?gpt2.backend=cpu&gpt2.temperature=0"));
  // The test hook: the worker makes the model's first GPU run record an invalid shader.
  const page = await open(gpuBrowser, "?gpt2.temperature=0&gpt2.backend=webgpu", () => localStorage.setItem("attention-live:gpu-fault", "1"));
  await page.waitForFunction(() => document.querySelector("#gpt2 .gpt2").dataset.backend === "cpu", null, { timeout: 30000 });
  const notice = await page.$eval("#gpt2 .backend-notice", (e) => e.textContent);
  assert.match(notice, /^WebGPU failed \(the GPU reported an error: .*WGSL.*\); the model now runs on the CPU\.$/);
  assert.match(await line(page), /CPU \(after a WebGPU failure; 1 thread[^)]*\)/);
  assert.deepEqual((await answer(page)).next, want.next, "the failed request was answered by the CPU");
  // Generation still works.
  assert.ok((await gpt2Generate(page)).length > 10);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("the translation model translates on WebGPU as on the CPU, and a GPU failure falls back with a notice", async () => {
  const open = (query, init) => openPage(gpuBrowser, `${base}/why-attention/${query}#translation`, DESKTOP, {
    init,
    wait: (page) => page.waitForFunction(() => document.querySelector("#translation .translation")?.dataset.backend,
      null, { timeout: 60000 }),
  });
  const read = (page) => page.$eval("#translation", (d) => ({
    text: d.querySelector(".translation").dataset.text,
    backend: d.querySelector(".translation").dataset.backend,
    hypotheses: [...d.querySelectorAll(".hypotheses li")].map((li) => li.textContent),
    status: d.querySelector(".translation-status").textContent,
  }));
  // SwiftShader is a software adapter: "automatic" keeps the CPU and says why.
  const auto = await open("");
  assert.match((await read(auto)).status, /Runs on the CPU \(the only WebGPU adapter here is a software fallback/);
  const gpu = await open("?translation.backend=webgpu");
  const cpu = await open("?translation.backend=cpu");
  const [g, c] = [await read(gpu), await read(cpu)];
  assert.equal(g.backend, "webgpu");
  assert.match(g.status, /Runs on WebGPU \(/);
  assert.equal(c.backend, "cpu");
  assert.equal(g.text, "1998-03-23");
  assert.deepEqual(g.hypotheses, c.hypotheses, "the same hypotheses and scores, to the displayed digit");
  // The test hook: the model's first GPU run records an invalid shader.
  const failing = await open("?translation.backend=webgpu", () => localStorage.setItem("attention-live:gpu-fault", "1"));
  const f = await read(failing);
  assert.equal(f.backend, "cpu");
  assert.equal(f.text, "1998-03-23", "the failed request was answered by the CPU");
  const notice = await failing.$eval("#translation .notice", (e) => e.textContent);
  assert.match(notice, /^WebGPU failed \(the GPU reported an error: .*WGSL.*\); the model now runs on the CPU\.$/);
  assert.deepEqual([...auto.errors, ...gpu.errors, ...cpu.errors, ...failing.errors], []);
  for (const p of [auto, gpu, cpu, failing]) await p.context().close();
});
