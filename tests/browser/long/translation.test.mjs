// A Marian translation model of OPUS-MT English→German's shape in "The real thing": a random-init
// checkpoint (written by `cargo run --example write_random_marian`, never committed, about
// 300 MB) with a tokenizer of OPUS-MT's configuration, served from another 127.0.0.1 port as the
// folder of "English → German, OPUS-MT". The page asks before downloading, shows the download's
// progress, loads the five files, translates and draws, keeps a copy that a link then reads
// without asking, and a stopped download keeps nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { execFileSync } from "node:child_process";
import { startServer } from "../static-server.mjs";
import {
  launchPersistent, newPage, settledUrl, serveBook, closeBook, recordErrors, downloadJson, ROOT,
} from "../browser.mjs";

const models = "/tmp/attention-live-test-marian";
let server, base, hub, browser;
const requests = [];

before(async () => {
  if (!fs.existsSync(`${models}/random-opus-mt-en-de/vocab.json`)) {
    execFileSync("cargo", ["run", "--quiet", "--example", "write_random_marian", "--", `${models}/random-opus-mt-en-de`],
      { cwd: ROOT, stdio: "inherit" });
  }
  ({ server, base, browser } = await serveBook());
  hub = await startServer(models, 0, { cors: true, onRequest: (p) => requests.push(p) });
});
after(async () => { await closeBook({ server, browser }); hub?.server.close(); });

const status = (page) => page.$eval("#translation .translation-status", (e) => e.dataset.status);
const until = (page, s, timeout = 240000) => page.waitForFunction(
  (want) => document.querySelector("#translation .translation-status")?.dataset.status === want, s, { timeout });

test("OPUS-MT's shape from a folder: asked first, downloaded with progress, translated and drawn, kept", async () => {
  // A profile on disk: an incognito context's storage quota is too small to keep 300 MB.
  const profile = fs.mkdtempSync("/tmp/attention-live-marian-profile-");
  const ctx = await launchPersistent(profile, { viewport: { width: 1280, height: 900 } });
  const page = ctx.pages()[0] ?? await ctx.newPage();
  recordErrors(page);
  const folder = encodeURIComponent(`${hub.url}/random-opus-mt-en-de/`);
  await page.goto(`${base}/why-attention/?translation.model=opus-mt-en-de&translation.base=${folder}&translation.beams=1`);
  await until(page, "waiting", 60000);
  assert.match(await page.$eval("#translation .translation-status", (e) => e.textContent), /not in this browser's storage yet/);
  assert.ok(!requests.some((p) => p.endsWith(".safetensors")), "nothing is downloaded before the reader asks");
  // The model opens on its own sentence and its last layer.
  assert.match(await page.$eval("#translation-text", (e) => e.value), /^It is in this spirit .* making the registration or voting process more difficult\.$/);
  await page.click("#translation button.download");
  await page.waitForSelector("#translation .translation-status progress", { timeout: 60000 });
  await until(page, "ready");
  const readout = await page.$eval("#translation .translation-status", (e) => e.textContent);
  assert.match(readout, /English → German, OPUS-MT \(downloaded and kept in this browser for next time\): 6 encoder and 6 decoder layers, 8 heads each, 73\.9 M parameters/);
  for (const f of ["config.json", "model.safetensors", "source.spm", "target.spm", "vocab.json"]) {
    assert.ok(requests.includes(`/random-opus-mt-en-de/${f}`), f);
  }
  await page.waitForFunction(() => document.querySelector("#translation .translation")?.dataset.loaded === "true");
  await page.waitForSelector("#translation .answers", { timeout: 120000 });
  const data = await downloadJson(page, "translation");
  const shown = data.outputs.computed.shown[0];
  assert.equal(shown.layer, 4);
  assert.equal(shown.cols.at(-1), "</s>");
  for (const row of shown.weights) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-4);
  // The link in another tab of this browser: read from its storage, nothing asked, nothing downloaded.
  const downloads = requests.filter((p) => p.endsWith(".safetensors")).length;
  const again = await ctx.newPage();
  recordErrors(again, false);
  await again.goto(await settledUrl(page));
  await until(again, "ready", 120000);
  assert.match(await again.$eval("#translation .translation-status", (e) => e.textContent), /read from this browser's storage/);
  assert.equal(requests.filter((p) => p.endsWith(".safetensors")).length, downloads);
  assert.deepEqual([...page.errors, ...again.errors], []);
  await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
});

test("a stopped download keeps nothing, and a folder that is not a web address is refused", async () => {
  // A host whose model file sends its first megabyte and then nothing: the download is under way
  // (its progress shown) when the reader stops it.
  const file = `${models}/random-opus-mt-en-de/model.safetensors`;
  const size = fs.statSync(file).size;
  const first = Buffer.alloc(1 << 20);
  const fd = fs.openSync(file, "r");
  fs.readSync(fd, first, 0, first.length, 0);
  fs.closeSync(fd);
  const stalls = await startServer(models, 0, {
    cors: true,
    respond: (req, res, path) => {
      if (!path.endsWith("model.safetensors")) return false;
      res.writeHead(200, { "content-length": String(size), "access-control-allow-origin": "*" });
      res.write(first);
      return true;
    },
  });
  const page = await newPage(browser, { viewport: { width: 390, height: 844 } });
  const folder = encodeURIComponent(`${stalls.url}/random-opus-mt-en-de/`);
  await page.goto(`${base}/why-attention/?translation.model=opus-mt-en-de&translation.base=${folder}`);
  await until(page, "waiting", 60000);
  await page.click("#translation button.download");
  await page.waitForSelector("#translation .translation-status progress");
  await page.click("#translation button.stop");
  await until(page, "failed");
  assert.match(await page.$eval("#translation .translation-status", (e) => e.textContent), /Stopped/);
  await page.reload();
  await until(page, "waiting", 60000);
  await page.goto(`${base}/why-attention/?translation.model=url&translation.base=ftp%3A%2F%2Fexample`);
  await until(page, "failed", 60000);
  assert.match(await page.$eval("#translation .translation-status", (e) => e.textContent), /is not a web address/);
  assert.deepEqual(page.errors, []);
  await page.context().close();
  stalls.server.closeAllConnections();
  stalls.server.close();
});
