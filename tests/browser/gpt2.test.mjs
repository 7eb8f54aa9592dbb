// The GPT-2 chapter in the real page: the model loads in a Web Worker, the tokens match
// Hugging Face's tokenizer, the bundled model's pronoun head points from "She" to "cat",
// knock-outs and generation change the page and the URL, and links restore the state.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { startServer } from "./static-server.mjs";
import { launch, newPage, settledUrl } from "./browser.mjs";

const card = JSON.parse(fs.readFileSync(new URL("../../static/models/stories/card.json", import.meta.url), "utf8"));
const hfTokens = JSON.parse(fs.readFileSync(new URL("../fixtures/gpt2/tokenizer.json", import.meta.url), "utf8"));

let server, base, browser;
before(async () => {
  ({ server, url: base } = await startServer(new URL("../../dist", import.meta.url).pathname));
  browser = await launch();
});
after(async () => { await browser?.close(); server?.close(); });

/// Waits for an analysis newer than `after` to be drawn.
async function analysed(page, after = 0) {
  await page.waitForFunction((a) => {
    const g = document.querySelector("#gpt2 .gpt2");
    return g && g.dataset.status === "ready" && Number(g.dataset.analysis) > a;
  }, after, { timeout: 30000 });
  return page.$eval("#gpt2 .gpt2", (g) => Number(g.dataset.analysis));
}

const chips = (page) => page.$$eval("#gpt2 .chip", (cs) => cs.map((c) => ({
  text: c.querySelector(".chip-text").textContent, id: Number(c.querySelector("small").textContent),
  w: Number(c.style.getPropertyValue("--w")), selected: c.classList.contains("selected"),
})));

test("the bundled model loads in a worker; tokens match HF; She looks at cat in the card's head", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  const t0 = Date.now();
  await page.goto(`${base}/gpt2-live/`);
  await analysed(page);
  console.log(`# model loaded and first analysis drawn in ${Date.now() - t0} ms`);
  const cs = await chips(page);
  assert.deepEqual(cs.map((c) => c.id), hfTokens[0].ids, "token ids equal GPT2TokenizerFast's");
  const status = await page.$eval("#gpt2 .model-status", (e) => e.textContent);
  assert.match(status, /4 layers × 4 heads/);
  // The default view is the card's She→cat head with "She" selected.
  const { layer, head } = card.she_cat_head;
  assert.equal(new URL(await settledUrl(page)).searchParams.get("gpt2.layer"), null, "defaults stay out of the URL");
  const sel = cs.find((c) => c.selected);
  assert.equal(sel.text, "·She");
  const best = cs.reduce((a, b) => (b.w > a.w ? b : a));
  assert.equal(best.text, "·cat", `layer ${layer} head ${head}: She's largest weight is on cat`);
  // Ten next-token candidates whose probabilities are sorted and at most 1 in total.
  const probs = await page.$$eval("#gpt2 .next-prob", (ps) => ps.map((p) => parseFloat(p.textContent)));
  assert.equal(probs.length, 10);
  assert.ok(probs.every((p, i) => i === 0 || p <= probs[i - 1]), "sorted");
  assert.ok(probs.reduce((a, b) => a + b, 0) <= 100.5);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("clicking a head and a token, knocking out a head and generating update the page and the URL; the link restores it", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/gpt2-live/?gpt2.temperature=0`);
  let id = await analysed(page);
  // Click the model view's thumbnail of layer 1, head 1.
  const w = await page.$eval("#gpt2 .model-view", (c) => c.getBoundingClientRect().width);
  const cell = Math.min(96, Math.max(24, (w - 26) / 4)); // the view's layout: 26 px labels, then 4 columns
  await page.locator("#gpt2 .model-view").click({ position: { x: 26 + 1.5 * cell, y: 26 + 1.5 * cell } });
  await page.waitForFunction(() => new URL(location.href).searchParams.get("gpt2.head") === "1");
  assert.equal(new URL(await settledUrl(page)).searchParams.get("gpt2.layer"), "1");
  // Click the chip "cat" to make it the query.
  await page.click("#gpt2 .chip:nth-child(2)");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("gpt2.token") === "1");
  // Knock out the selected head: the URL records it and the intact bars appear.
  await page.click("#gpt2 .knock-out");
  await page.waitForFunction(() => document.querySelectorAll("#gpt2 .bar.intact").length === 10);
  id = await page.$eval("#gpt2 .gpt2", (g) => Number(g.dataset.analysis));
  assert.equal(new URL(await settledUrl(page)).searchParams.get("gpt2.ablate"), "1.1");
  // Greedy generation appends text to the prompt, streamed into the URL.
  const before = await page.$eval("#gpt2 textarea", (t) => t.value);
  await page.click("#gpt2 .generate");
  await page.waitForFunction(() => !document.querySelector("#gpt2 .generate").disabled && document.querySelector("#gpt2 textarea").value.length > 0, null, { timeout: 30000 });
  await page.waitForFunction((b) => document.querySelector("#gpt2 textarea").value.length > b.length, before);
  // Analyses run between generated tokens; wait for the one of the final prompt.
  await page.waitForFunction(() => {
    const shown = [...document.querySelectorAll("#gpt2 .chips:not(.compare .chips) .chip .chip-text")].map((c) => c.textContent.replaceAll("·", " ").replaceAll("↵", "\n")).join("");
    return !document.querySelector("#gpt2 .stop") && shown === document.querySelector("#gpt2 textarea").value;
  }, null, { timeout: 30000 });
  const prompt = await page.$eval("#gpt2 textarea", (t) => t.value);
  assert.ok(prompt.startsWith(before) && prompt.length > before.length + 10, `generated: ${prompt.slice(before.length)}`);
  assert.equal(new URL(await settledUrl(page)).searchParams.get("gpt2.prompt"), prompt);
  const shown = await chips(page);
  // The same link in a fresh browser shows the same tokens, selection and weights.
  await page.click("#gpt2 .copy-link");
  const link = await page.$eval("#gpt2 .link-field", (e) => e.value);
  const fresh = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await fresh.goto(link);
  await analysed(fresh);
  assert.deepEqual(await chips(fresh), shown);
  assert.equal(await fresh.$$eval("#gpt2 .bar.intact", (b) => b.length), 10);
  // Greedy decoding is deterministic: generating again from the restored page gives the same text.
  assert.deepEqual(page.errors, []);
  assert.deepEqual(fresh.errors, []);
  await page.context().close();
  await fresh.context().close();
});

test("the induction model from a link; bad knock-outs and out-of-range heads get notices", async () => {
  const page = await newPage(browser, { viewport: { width: 390, height: 800 } });
  await page.goto(`${base}/gpt2-live/?gpt2.model=induction&gpt2.prompt=Q%20F%20K%20B%20Z%20Q%20F%20K%20B%20Z&gpt2.layer=9&gpt2.ablate=1.3%20x.y`);
  await analysed(page);
  assert.match(await page.$eval("#gpt2 .model-status", (e) => e.textContent), /2 layers × 4 heads/);
  assert.deepEqual((await chips(page)).map((c) => c.text), ["Q", "·F", "·K", "·B", "·Z", "·Q", "·F", "·K", "·B", "·Z"]);
  const notes = await page.$$eval("#gpt2 .notice", (ns) => ns.map((n) => n.textContent).join(" | "));
  assert.match(notes, /no layer 9/);
  assert.match(notes, /ignored x\.y/);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `no horizontal overflow at 390 px (${overflow})`);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("a model that fails to load is explained in place and the page keeps working", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.route("**/models/stories/model.safetensors", (r) => r.fulfill({ status: 200, body: Buffer.from("not a safetensors file at all") }));
  await page.goto(`${base}/gpt2-live/`);
  await page.waitForSelector("#gpt2 .gpt2[data-status=failed]");
  const msg = await page.$eval("#gpt2 .notice.error", (e) => e.textContent);
  assert.match(msg, /could not be loaded: stories: the safetensors header is malformed/);
  // Another model still loads.
  await page.selectOption("#gpt2 select", "induction");
  await analysed(page);
  await page.context().close();
});

test("two prompts side by side; the head view draws and its head keys select heads", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  const b = "My dog is small, cute, and fluffy. She likes belly rubs.";
  await page.goto(`${base}/gpt2-live/?gpt2.compare=${encodeURIComponent(b)}`);
  await page.waitForSelector("#gpt2 .compare-side:nth-child(2) .chip");
  const sides = await page.$$eval("#gpt2 .compare-side", (ss) => ss.map((s) => {
    const cs = [...s.querySelectorAll(".chip")].map((c) => ({ t: c.querySelector(".chip-text").textContent, w: Number(c.style.getPropertyValue("--w")) }));
    return cs.reduce((a, c) => (c.w > a.w ? c : a)).t;
  }));
  assert.deepEqual(sides, ["·cat", "·dog"], "in both prompts She looks at the animal");
  // The head view has one key per head; clicking H2 selects head 2.
  assert.equal(await page.$$eval("#gpt2 .head-key", (k) => k.length), 4);
  const hv = await page.$eval("#gpt2 .head-view", (c) => c.toDataURL());
  await page.hover("#gpt2 .head-key:nth-child(1)");
  await page.waitForFunction((d) => document.querySelector("#gpt2 .head-view").toDataURL() !== d, hv);
  await page.click("#gpt2 .head-key:nth-child(3)");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("gpt2.head") === "2");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("the positional chapter plots a bundled model's learned wpe; the offset marks a diagonal; links restore it", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/positional/#wpe`);
  await page.waitForFunction(() => /Mean cosine similarity of positions 1 apart: 0\.68; 30 apart: 0\.35/.test(document.querySelector("#wpe .readout")?.textContent || ""), null, { timeout: 30000 });
  const canvases = () => page.$$eval("#wpe canvas", (cs) => cs.map((c) => c.toDataURL()));
  const before = await canvases();
  await page.$eval("#wpe-offset", (r) => { r.value = "60"; r.dispatchEvent(new Event("input", { bubbles: true })); });
  await page.waitForFunction(() => /60 apart: −?-?0\.27/.test(document.querySelector("#wpe .readout").textContent));
  const after = await canvases();
  assert.equal(after[0], before[0], "the table itself does not change");
  assert.notEqual(after[1], before[1], "the marked diagonal moves");
  assert.equal(new URL(await settledUrl(page)).searchParams.get("wpe.offset"), "60");
  await page.selectOption("#wpe select", "induction");
  await page.waitForFunction(() => /64 positions × 64 dimensions/.test(document.querySelector("#wpe .readout").textContent));
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
