// The opening chapter in the real page: both seq2seq models decode the reader's word, the
// alignment follows the chosen model, bad input is explained in place, the bottleneck curve
// can be recomputed live, and links restore the state.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { newPage, settledUrl, serveBook, closeBook, setValue, downloadJson } from "./browser.mjs";

let server, base, browser;
before(async () => ({ server, base, browser } = await serveBook()));
after(() => closeBook({ server, browser }));

test("both models reverse the reader's word and the alignment is drawn", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/why-attention/`);
  await page.waitForSelector("#alignment .answers");
  const answers = () => page.$$eval("#alignment .answers dd", (d) => d.map((e) => e.textContent.trim()));
  let [fixed, attention, correct] = await answers();
  assert.equal(correct, "noitnetta");
  assert.equal(attention, "noitnetta ✓", "the attention model reverses a 9-letter word");
  assert.match(fixed, / [✓✗]$/);
  assert.ok(await page.$("#alignment canvas.matrix"));
  // Bad input: explained in place, the rest of the page keeps working.
  await setValue(page, "#alignment-text", "abc3");
  await page.waitForSelector("#alignment .notice");
  assert.match(await page.$eval("#alignment .notice", (e) => e.textContent), /only the letters a–z; “\u20683\u2069” is not one/);
  // A long word: the link keeps it and the model choice.
  await setValue(page, "#alignment-text", "thequickbrownfoxjumpsoverthel");
  await page.selectOption("#alignment-model", "luong_local");
  await page.waitForFunction(() => /window centres/.test(document.querySelector("#alignment .alignment").textContent));
  [fixed, attention, correct] = await answers();
  assert.equal(correct, "lehtrevospmujxofnworbkciuqeht");
  const fresh = await newPage(browser);
  await fresh.goto(await settledUrl(page));
  await fresh.waitForSelector("#alignment .answers");
  assert.deepEqual(await fresh.$$eval("#alignment .answers dd", (d) => d.map((e) => e.textContent.trim())), [fixed, attention, correct]);
  assert.equal(await fresh.$eval("#alignment-model", (e) => e.value), "luong_local");
  assert.deepEqual([...page.errors, ...fresh.errors], []);
  await page.context().close(); await fresh.context().close();
});

test("the bottleneck curve is drawn and one length is recomputed live", async () => {
  const page = await newPage(browser, { viewport: { width: 390, height: 844 } });
  await page.goto(`${base}/why-attention/?bottleneck.length=12`);
  await page.waitForSelector("#bottleneck button.measure:not([disabled])");
  await page.click("#bottleneck button.measure");
  await page.waitForFunction(() => document.querySelector("#bottleneck .bottleneck-live").dataset.rows === "2", null, { timeout: 60000 });
  const rows = await page.$$eval("#bottleneck .bottleneck-live tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(rows.map((r) => r[1]), ["12", "12"]);
  for (const r of rows) assert.match(r[2], /^\d+%$/);
  const pct = (s) => Number(s.replace("%", ""));
  assert.ok(pct(rows[1][2]) > pct(rows[0][2]), `attention beats the fixed context at 12 letters: ${rows}`);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("the RNN's two problems follow the input", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/why-attention/`);
  const readout = () => page.$eval("#rnn-problems .rnn-readout", (e) => e.textContent);
  await page.waitForFunction(() => /29 letters/.test(document.querySelector("#rnn-problems .rnn-readout")?.textContent));
  await setValue(page, "#rnn-problems-text", "abcdefghij");
  await page.waitForFunction(() => /^10 letters: the last state waits on 10 steps/.test(document.querySelector("#rnn-problems .rnn-readout").textContent));
  assert.match(await readout(), /Changing the first letter moves it by [\d.]+, the last letter by [\d.]+/);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("the translation Transformer translates in the page and draws its three attentions", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/why-attention/`);
  const translated = (text) => page.waitForFunction(
    (t) => document.querySelector("#translation .translation")?.dataset.text === t, text, { timeout: 60000 });
  // The bundled model, loaded by the worker through the page, gives the native session's answer
  // (tests/book/real_model_demos.rs) with beam search, and its cross-attention of the last layer.
  await translated("1998-03-23");
  assert.match(await page.$eval("#translation .readout", (e) => e.textContent), /3 encoder and 3 decoder layers, 4 heads/);
  assert.ok(await page.$("#translation canvas.matrix"));
  assert.match(await page.$eval("#translation details.beam-steps", (e) => e.textContent), /1998-07-23/);
  const data = await downloadJson(page, "translation");
  assert.equal(data.outputs.computed.text, "1998-03-23");
  assert.deepEqual(data.outputs.computed.strongest[0], [13, 9, 10, 12, 13, 13, 7, 13, 2, 4, 13]);
  for (const row of data.outputs.computed.shown[0].weights) {
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-4, "a row of cross-attention sums to 1");
  }
  // The decoder's self-attention is masked: nothing above the diagonal.
  await page.selectOption("#translation-attention", "decoder");
  await page.waitForFunction(() => /masked/.test(document.querySelector("#translation canvas.matrix")?.getAttribute("aria-label")));
  const masked = await downloadJson(page, "translation");
  masked.outputs.computed.shown[0].weights.forEach((row, i) => assert.ok(row.slice(i + 1).every((w) => w === 0), `row ${i}`));
  // Another date, and every head of the last layer's cross-attention knocked out.
  await setValue(page, "#translation-text", "march 3rd 1999");
  await translated("1999-03-03");
  await setValue(page, "#translation-knock-out", "cross.2.0 cross.2.1 cross.2.2 cross.2.3");
  await setValue(page, "#translation-text", "the twenty-third of march, nineteen ninety-eight");
  await translated("1966-07-12");
  // Bad input is explained in place and changes nothing else.
  await setValue(page, "#translation-knock-out", "cross.two");
  await page.waitForSelector("#translation .notice");
  assert.match(await page.$eval("#translation .notice", (e) => e.textContent), /“cross.two” is not a head/);
  await setValue(page, "#translation-knock-out", "");
  await translated("1998-03-23");
  await setValue(page, "#translation-text", "the twenty-third of march, nineteen ninety-eight ".repeat(6));
  await page.waitForSelector("#translation .notice");
  assert.match(await page.$eval("#translation .notice", (e) => e.textContent), /64/);
  assert.equal(await page.$eval("#translation .translation", (e) => e.dataset.text), "1998-03-23");
  // A link restores the state.
  await setValue(page, "#translation-text", "the first of january, two thousand");
  await translated("2000-01-01");
  const fresh = await newPage(browser, { viewport: { width: 390, height: 844 } });
  await fresh.goto(await settledUrl(page));
  await fresh.waitForFunction(() => document.querySelector("#translation .translation")?.dataset.text === "2000-01-01", null, { timeout: 60000 });
  assert.equal(await fresh.$eval("#translation-attention", (e) => e.value), "decoder");
  assert.deepEqual([...page.errors, ...fresh.errors], []);
  await page.context().close(); await fresh.context().close();
});
