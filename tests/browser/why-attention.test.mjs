// The opening chapter in the real page: both seq2seq models decode the reader's word, the
// alignment follows the chosen model, bad input is explained in place, the bottleneck curve
// can be recomputed live, and links restore the state.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { newPage, settledUrl, serveBook, closeBook, setValue } from "./browser.mjs";

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
