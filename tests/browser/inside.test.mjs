// "Looking inside a model" in the real page: the bundled models in the worker answer the three
// tools with the reference script's numbers (tests/fixtures/inside, PyTorch with hooks), a click
// on a cell shows its details, a head links to the head view, and a link restores the tool.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { newPage, serveBook, closeBook, downloadJson } from "./browser.mjs";

let server, base, browser;
before(async () => ({ server, base, browser } = await serveBook()));
after(() => closeBook({ server, browser }));

const fixture = (name) => JSON.parse(fs.readFileSync(new URL(`../fixtures/inside/${name}.json`, import.meta.url), "utf8"));
const answered = (page, tool) => page.waitForFunction((t) => {
  const e = document.querySelector("#inside .inside");
  return e?.dataset.tool === t && e.dataset.answered === "true";
}, tool, { timeout: 60000 });
const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

test("the lens and a patching sweep on the bundled GPT-2 give the reference's numbers", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/inside/`);
  await answered(page, "lens");
  const ref = fixture("stories");
  const rows = await page.$$eval('#inside [data-grid="lens"] tbody tr', (r) => r.length);
  assert.equal(rows, ref.lens.top_ids.length, "one row per boundary");
  let data = await downloadJson(page, "inside");
  const lens = data.outputs.computed.answer;
  assert.equal(lens.tool, "lens");
  const last = ref.lens.top_ids.length - 1, t = ref.lens.tokens.length - 1;
  assert.equal(lens.top[last][t][0].id, ref.lens.top_ids[last][t][0]);
  close(lens.top[last][t][0].prob, ref.lens.top_probs[last][t][0], 1e-4, "the model's own last prediction");
  // A click on a token of the lens follows it across the layers.
  await page.click('#inside [data-grid="lens"] tbody tr:first-child td:last-child button');
  await page.waitForFunction(() => new URL(location.href).searchParams.get("inside.track") !== null);
  await answered(page, "lens");

  // Patching, the chapter's cat and dog: the clean and corrupted metrics and the residual grid.
  await page.selectOption("#inside-tool", "patching");
  await answered(page, "patching");
  data = await downloadJson(page, "inside");
  const p = data.outputs.computed.answer;
  assert.equal(p.answer.id, ref.patching.answer);
  assert.equal(p.wrong.id, ref.patching.wrong);
  close(p.clean_run.metric, ref.patching.clean_metric, 1e-3, "clean metric");
  close(p.corrupt_run.metric, ref.patching.corrupt_metric, 1e-3, "corrupted metric");
  ref.patching.residual.forEach((row, b) => row.forEach((m, i) => close(p.residual[b][i].metric, m, 1e-3, `cell ${b}.${i}`)));
  // The embedding of the token that differs restores the clean run: 1.00; before it, nothing differs.
  const cell = (r, c) => page.$eval(`#inside [data-grid="residual"] tbody tr:nth-child(${r + 1}) td:nth-child(${c + 2}) button`,
    (b) => b.textContent);
  assert.equal(await cell(0, 1), "1.00");
  assert.equal(await cell(2, 0), "0.00");
  await page.click('#inside [data-grid="residual"] tbody tr:nth-child(3) td:nth-child(3) button');
  await page.waitForSelector("#inside .inside-runs .inside-bars li");
  assert.match(new URL(page.url()).searchParams.get("inside.cell"), /^residual\.2\.1$/);
  await page.close();
});

test("the head detectors find the bundled induction model's heads and link to the head view", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/inside/?inside.model=induction&inside.tool=heads#inside`);
  await answered(page, "heads");
  const data = await downloadJson(page, "inside");
  const ind = data.outputs.computed.answer.induction;
  const best = ind.flatMap((row, l) => row.map((v, h) => [v, l, h])).sort((a, b) => b[0] - a[0])[0];
  assert.deepEqual(best.slice(1), [1, 3], "the card's induction head");
  // Head 0.1, the previous-token head the induction head builds on (its card's).
  await page.click('#inside [data-grid="previous"] tbody tr:nth-child(1) td:nth-child(3) button');
  const href = await page.$eval("#inside .inside-head a", (a) => a.getAttribute("href"));
  const u = new URL(href, base);
  assert.equal(u.pathname, "/gpt2-live/");
  assert.equal(u.searchParams.get("gpt2.model"), "induction");
  assert.equal(u.searchParams.get("gpt2.layer"), "0");
  assert.equal(u.searchParams.get("gpt2.head"), "1");
  assert.equal(u.searchParams.get("gpt2.token"), "19", "from the last of the 20 letters");
  // The grids scroll inside their frame on a phone; the page does not.
  await page.setViewportSize({ width: 390, height: 844 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1));
  await page.close();
});

test("a long patching sweep shows its progress, stops on Stop and runs again on request", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  // 47 tokens that differ at the second: about 250 patched runs of the bundled model, seconds of work.
  const tail = " and the dog".repeat(15);
  const q = new URLSearchParams({ "inside.tool": "patching", "inside.sweep": "both", "inside.clean": `My cat${tail}`,
    "inside.corrupt": `My dog${tail}` });
  await page.goto(`${base}/inside/?${q}#inside`);
  const status = "#inside .inside-status";
  await page.waitForFunction((s) => Number(document.querySelector(`${s}[data-status="sweeping"] progress`)?.value) > 0,
    status, { timeout: 60000 });
  const total = await page.$eval(`${status} progress`, (p) => Number(p.max));
  assert.ok(total > 200, `runs in the sweep: ${total}`);
  await page.click(`${status} .stop`);
  await page.waitForSelector(`${status}[data-status="stopped"]`);
  await page.waitForTimeout(1000);
  assert.equal(await page.$eval(status, (e) => e.dataset.status), "stopped", "a stopped sweep stays stopped");
  assert.equal(await page.$eval("#inside .inside", (e) => e.dataset.answered), "false", "nothing of it is shown");
  await page.click(`${status}[data-status="stopped"] button`);
  await page.waitForSelector(`${status}[data-status="sweeping"]`);
  await page.waitForFunction(() => document.querySelector("#inside .inside")?.dataset.answered === "true", null,
    { timeout: 120000 });
  const rows = await page.$$eval('#inside [data-grid="residual"] tbody tr', (r) => r.length);
  assert.equal(rows, 5, "the finished sweep's grid: the embeddings and four blocks");
  assert.deepEqual(page.errors, []);
  await page.close();
});
