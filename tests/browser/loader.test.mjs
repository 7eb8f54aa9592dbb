// The model loader against bad servers and races: a host on another 127.0.0.1 port serves the
// bundled induction model correctly, and also as an HTML page with status 200, cut short (with and
// without Content-Length), truncated, with offsets that wrap past 2³², with an absurd config, and
// slowly. Each bad download gets a message and a Retry, nothing bad stays in Cache Storage, the
// stored list shows and clears what is kept, a slow download never replaces the model chosen after
// it, a link's long prompt is cut with a notice, and a site file that differs from the build is refused.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { startServer } from "./static-server.mjs";
import { newPage, serveBook, closeBook, ROOT, DIST, gpt2Status as status } from "./browser.mjs";

const config = fs.readFileSync(`${ROOT}/static/models/induction/config.json`);
const model = fs.readFileSync(`${ROOT}/static/models/induction/model.safetensors`);
let server, base, host, browser;

// Folder -> how model.safetensors is served (config.json is always served well, except for /html/).
const cors = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "Content-Length" };
// A file whose one tensor's offsets end at 2³² (they wrapped past it in the 32-bit build), and a
// config with a hundred million layers.
const header = JSON.stringify({ "wte.weight": { dtype: "F32", shape: [1], data_offsets: [2 ** 32 - 4, 2 ** 32] } });
const wrapped = Buffer.concat([Buffer.alloc(8), Buffer.from(header), Buffer.alloc(16)]);
wrapped.writeBigUInt64LE(BigInt(header.length), 0);
const absurd = Buffer.from(config.toString().replace(/"n_layer": *\d+/, '"n_layer": 100000000'));
// The same model with a vocabulary of 100 (wte cut to its first 100 rows), smaller than the
// tokenizer's: every English prompt has ids the model does not have.
function smallVocab(file, vocab) {
  const n = Number(file.readBigUInt64LE(0));
  const head = JSON.parse(file.subarray(8, 8 + n).toString());
  const data = file.subarray(8 + n);
  const out = {};
  const parts = [];
  let at = 0;
  for (const [name, t] of Object.entries(head)) {
    if (name === "__metadata__") { out[name] = t; continue; }
    let bytes = data.subarray(t.data_offsets[0], t.data_offsets[1]);
    let shape = t.shape;
    if (name.endsWith("wte.weight")) {
      shape = [vocab, t.shape[1]];
      bytes = bytes.subarray(0, vocab * t.shape[1] * (t.dtype === "F32" ? 4 : 2));
    }
    out[name] = { dtype: t.dtype, shape, data_offsets: [at, at + bytes.length] };
    parts.push(bytes);
    at += bytes.length;
  }
  const json = Buffer.from(JSON.stringify(out));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, ...parts]);
}
const small = smallVocab(model, 100);
const smallConfig = Buffer.from(config.toString().replace(/"vocab_size": *\d+/, '"vocab_size": 100'));

// The host's every answer (the shared static server's `respond`: it serves no files of its own).
function serve(req, res, pathname) {
  const [, folder, file] = pathname.split("/");
  let body = file === "config.json" ? config : model;
  if (folder === "wrapped" && file !== "config.json") body = wrapped;
  if (folder === "absurd" && file === "config.json") body = absurd;
  if (folder === "smallvocab") body = file === "config.json" ? smallConfig : small;
  const octets = { ...cors, "Content-Type": "application/octet-stream" };
  if (folder === "html") {
    const page = "<!DOCTYPE html><html><body>Sign in to continue</body></html>";
    res.writeHead(200, { ...cors, "Content-Type": "text/html" }).end(page);
  } else if (file === "config.json" || ["good", "wrapped", "absurd", "smallvocab"].includes(folder)) {
    res.writeHead(200, { ...octets, "Content-Length": body.length }).end(body);
  } else if (folder === "short") {
    // Announces the whole file, sends a third, and closes.
    res.writeHead(200, { ...octets, "Content-Length": body.length });
    res.write(body.subarray(0, body.length / 3), () => res.socket.destroy());
  } else if (folder === "noclen") {
    // No Content-Length (chunked), a third, then the connection closes.
    res.writeHead(200, octets);
    res.write(body.subarray(0, body.length / 3), () => res.socket.destroy());
  } else if (folder === "truncated") {
    // A complete response whose file is cut: the header promises more tensors than follow.
    const cut = body.subarray(0, body.length / 2);
    res.writeHead(200, { ...octets, "Content-Length": cut.length }).end(cut);
  } else if (folder === "slow") {
    setTimeout(() => res.writeHead(200, { ...octets, "Content-Length": body.length }).end(body), 4000);
  } else {
    res.writeHead(404, cors).end("not found");
  }
  return true;
}

before(async () => {
  ({ server, base, browser } = await serveBook());
  host = await startServer(null, 0, { respond: serve });
});
after(async () => { await closeBook({ server, browser }); host?.server.close(); });

const link = (folder, extra = "") =>
  `${base}/gpt2-live/?gpt2.model=url&gpt2.base=${encodeURIComponent(`${host.url}/${folder}/`)}${extra}`;
const stored = (page) => page.evaluate(async () => {
  if (!(await caches.has("attention-live-models"))) return [];
  const c = await caches.open("attention-live-models");
  return (await c.keys()).map((r) => r.url);
});

test("bad downloads get a message and a Retry, and none is kept", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  const cases = [
    ["html", /the server sent a web page, not a model file/],
    ["short", /closed early|broke off/],
    ["noclen", /broke off|closed early/],
    ["truncated", /model\.safetensors|truncated|shorter|bytes/],
    // 2³² and more: the offsets did not wrap to a small number.
    ["wrapped", /needs at least 42949673\d\d bytes/],
    ["absurd", /n_layer.*at most/],
  ];
  for (const [folder, why] of cases) {
    await page.goto(link(folder));
    await page.waitForSelector("#gpt2 .download-model", { timeout: 15000 });
    // Not pinned: the consent does not claim the files are checked.
    assert.doesNotMatch(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /checked/);
    await page.click("#gpt2 .download-model");
    await page.waitForSelector("#gpt2 .gpt2[data-status=failed]", { timeout: 15000 });
    assert.match(await page.$eval("#gpt2 .model-failed", (e) => e.textContent), why, folder);
    assert.deepEqual((await stored(page)).filter((u) => u.includes(`/${folder}/`)), [], `${folder}: nothing kept`);
    // Retry asks again (the model is not stored), and the worker still answers.
    await page.click("#gpt2 .model-failed .retry");
    await page.waitForSelector("#gpt2 .download-model", { timeout: 15000 });
  }
  assert.deepEqual(page.errors.filter((e) => !/Failed to load resource|ERR_/.test(e)), []);
  await page.context().close();
});

test("a good download is kept, listed with its size, and Clear removes it", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(link("good"));
  await page.waitForSelector("#gpt2 .download-model", { timeout: 15000 });
  await page.click("#gpt2 .download-model");
  await page.waitForSelector("#gpt2 .gpt2[data-status=ready]", { timeout: 30000 });
  assert.equal((await stored(page)).length, 2);
  await page.waitForSelector("#gpt2 .stored-models[data-count='1']");
  assert.match(await page.$eval("#gpt2 .stored-models", (e) => e.textContent), /\/good\/: 6\.6 MB/);
  await page.click("#gpt2 .clear-stored");
  await page.waitForSelector("#gpt2 .stored-models[data-count='0']");
  assert.deepEqual(await stored(page), []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("a model whose vocabulary is smaller than its tokenizer's says so and asks once; Generate leaves it alive",
  async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  let crashed = false;
  page.on("crash", () => { crashed = true; });
  // Count the analyses the page asks for: a refusal must not be asked again and again.
  await page.addInitScript(() => {
    window.analyses = 0;
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (m, t) {
      if (JSON.stringify(m ?? "").includes("analyze")) window.analyses += 1;
      return post.call(this, m, t);
    };
  });
  await page.goto(link("smallvocab"));
  await page.waitForSelector("#gpt2 .download-model", { timeout: 15000 });
  await page.click("#gpt2 .download-model");
  await page.waitForSelector("#gpt2 .gpt2[data-status=ready]", { timeout: 30000 });
  const refused = () => /outside the model's vocabulary of 100/.test(document.querySelector("#gpt2")?.textContent);
  await page.waitForFunction(refused);
  const generate = await page.$("#gpt2 .generate");
  if (generate && !(await generate.isDisabled())) await generate.click();
  await page.waitForTimeout(5000);
  assert.equal(crashed, false, "the tab crashed");
  const asked = await page.evaluate(() => window.analyses);
  assert.ok(asked >= 1 && asked <= 5, `${asked} analyses asked for one prompt`);
  assert.match(await page.$eval("#gpt2", (e) => e.textContent), /vocabulary of 100/);
  await page.context().close();
});

test("a slow download that ends after the bundled model was chosen does not replace it", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(link("slow"));
  await page.waitForSelector("#gpt2 .download-model", { timeout: 15000 });
  await page.click("#gpt2 .download-model");
  await page.selectOption("#gpt2 select", "stories");
  await page.waitForSelector("#gpt2 .gpt2[data-status=ready]", { timeout: 30000 });
  await page.waitForTimeout(5000); // the slow file arrives meanwhile
  assert.equal(await status(page), "ready");
  assert.match(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /^Pet stories.*4 layers/);
  // The link names the bundled model (the default one, so by leaving the key out).
  assert.ok([null, "stories"].includes(new URL(page.url()).searchParams.get("gpt2.model")));
  // What runs is the 4-layer model: the model view has 4 rows of heads.
  assert.deepEqual(await stored(page), [], "the superseded download was not kept either");
  await page.context().close();
});

test("a link's long prompt keeps its first 4000 characters, and link text is isolated", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  const long = "Once upon a time ".repeat(300);
  await page.goto(`${base}/gpt2-live/?gpt2.prompt=${encodeURIComponent(long)}&gpt2.zz=%E2%80%AEevil#gpt2`);
  await page.waitForSelector("#gpt2 .url-notice");
  const value = await page.$eval("#gpt2 textarea", (t) => t.value);
  assert.equal(value.length, 4000);
  assert.ok(long.startsWith(value));
  const notice = await page.$eval("#gpt2 .url-notice", (e) => e.textContent);
  assert.match(notice, /Cut gpt2\.prompt=.*its first 4000 characters are used/);
  assert.deepEqual(await page.$$eval("#gpt2 .url-notice bdi", (b) => b.map((x) => x.textContent).filter((t) => t.includes("\u202e"))), ["\u202eevil"]);
  await page.waitForSelector("#gpt2 .text-limit");
  await page.context().close();
});

test("a site file that differs from the build is refused: a bundled model, the worker's wasm", async () => {
  // One byte of the bundled model changed on its way (a stale cache, a proxy, a tampered copy).
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  const tampered = Buffer.from(fs.readFileSync(`${ROOT}/static/models/stories/model.safetensors`));
  tampered[tampered.length - 5] ^= 1;
  await page.route("**/models/stories/model.safetensors", (r) =>
    r.fulfill({ status: 200, contentType: "application/octet-stream", body: tampered }));
  await page.goto(`${base}/positional/?wpe.model=stories#wpe`);
  await page.waitForSelector("#wpe .notice.error", { timeout: 20000 });
  assert.match(await page.innerText("#wpe .notice.error"), /models\/stories\/model\.safetensors has SHA-256 .* different or corrupted/);
  // The GPT-2 chapter's bundled model goes through the worker: the same check there.
  await page.goto(`${base}/gpt2-live/?gpt2.model=stories`);
  await page.waitForSelector("#gpt2 .gpt2[data-status=failed]", { timeout: 30000 });
  assert.match(await page.$eval("#gpt2 .model-failed", (e) => e.textContent), /SHA-256/);
  await page.context().close();

  // The worker's wasm altered (both builds: the threaded one, which Chromium loads, and the
  // single-threaded one it falls back on): the worker stops and the page says why, instead of
  // waiting for ever.
  const other = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  for (const build of ["gpt2-worker", "gpt2-worker-mt"]) {
    const wasm = Buffer.from(fs.readFileSync(`${DIST}/${build}_bg.wasm`));
    wasm[wasm.length - 1] ^= 1;
    await other.route(`**/${build}_bg.wasm`, (r) => r.fulfill({ status: 200, contentType: "application/wasm", body: wasm }));
  }
  await other.goto(`${base}/gpt2-live/?gpt2.model=stories`);
  await other.waitForSelector("#gpt2 .gpt2[data-status=failed]", { timeout: 30000 });
  assert.match(await other.innerText("#gpt2"), /not those the book was built with/);
  await other.context().close();
});
