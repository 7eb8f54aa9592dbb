// The checked exercises at the end of Scoring, as a reader meets them: a computed answer
// checked right and wrong (with the hint its mistake earns), a prediction and "See it" moving
// the demo, a goal met by moving a slider, progress kept across a reload and shown in the
// contents, and an exercise's link reopening the chapter at it with its demo as it was.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { newPage, serveBook, closeBook, settledUrl, DESKTOP, setValue } from "./browser.mjs";

let server, base, browser, open;
before(async () => ({ server, base, browser, open } = await serveBook({ page: DESKTOP, wait: "main .exercise" })));
after(() => closeBook({ server, browser }));

const verdict = (page, id) => page.innerText(`#ex-${id} .ex-verdict`);

test("compute: a wrong answer gets its targeted hint, an unreadable one the reason, a right one Right", async () => {
  const page = await open("/scoring/");
  const id = "scoring-scaled-weight";
  const field = `#ex-${id}-answer`;
  assert.equal(await page.$$eval("main .exercise h3", (hs) => hs.length), 6, "six numbered cards");
  assert.match(await page.innerText(`#ex-${id} h3`), /^Exercise 1/);
  // The unscaled weight, e^4 / (e^6 + e^4 + e^2) ≈ 0.117: the hint names the missing √d.
  await page.fill(field, "0.117");
  await page.press(field, "Enter");
  await page.waitForFunction((i) => document.querySelector(`#ex-${i} .ex-verdict p`), id);
  let v = await verdict(page, id);
  assert.match(v, /Not right/);
  assert.match(v, /without the scaling/, `the targeted hint: ${v}`);
  assert.equal(await page.$eval(`#ex-${id} .ex-verdict`, (d) => d.getAttribute("aria-live")), "polite");
  await page.fill(field, "e^2 + * 1");
  await page.click(`#ex-${id} .ex-check`);
  await page.waitForFunction((i) => /Could not read/.test(document.querySelector(`#ex-${i} .ex-verdict`).innerText), id);
  await page.fill(field, "e/(e^2+e+1)");
  await page.press(field, "Enter");
  await page.waitForFunction((i) => /Right/.test(document.querySelector(`#ex-${i} .ex-verdict`).innerText), id);
  assert.ok(await page.$(`#ex-${id}.solved .ex-solved`), "the card says solved");
  // Hints one at a time, then the solution.
  await page.click(`#ex-${id} .ex-hint`);
  assert.equal(await page.$$eval(`#ex-${id} .ex-hints li`, (l) => l.length), 1);
  assert.equal(await page.$eval(`#ex-${id}-solution`, (s) => s.hidden), true);
  await page.click(`#ex-${id} .ex-show-solution`);
  assert.equal(await page.$eval(`#ex-${id}-solution`, (s) => s.hidden), false);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("predict: the right choice is Right, and See it sets the demo and the address", async () => {
  const page = await open("/scoring/");
  const id = "scoring-double-both";
  assert.equal(await page.$eval("#temperature-gap", (s) => s.value), "1");
  await page.check(`#ex-${id} .ex-choice:nth-of-type(1) input`);
  await page.click(`#ex-${id} .ex-check`);
  assert.match(await verdict(page, id), /Not right/);
  await page.check(`#ex-${id} .ex-choice:nth-of-type(3) input`);
  await page.click(`#ex-${id} .ex-check`);
  await page.waitForFunction((i) => /Right/.test(document.querySelector(`#ex-${i} .ex-verdict`).innerText), id);
  await page.click(`#ex-${id} .ex-see`);
  await page.waitForFunction(() => document.querySelector("#temperature-gap").value === "2");
  assert.match(await page.$eval("#temperature-t", (s) => s.getAttribute("aria-valuetext")), /^2(\.0+)?$/);
  const url = new URL(await settledUrl(page));
  assert.equal(url.searchParams.get("temperature.gap"), "2");
  assert.equal(url.searchParams.get("temperature.t"), "2");
  const top = await page.$eval("#temperature", (d) => d.getBoundingClientRect().top);
  assert.ok(top >= -5 && top < 900, `the demo is scrolled into view (top at ${top})`);
  // Ordering from the keyboard: B, D, A, C from A, B, C, D.
  const order = "scoring-order-top-weight";
  for (const [letter, dir, times] of [[1, "up", 1], [3, "up", 2]]) {
    for (let k = 0; k < times; k++) {
      await page.focus(`#ex-${order}-${dir}-${letter}`);
      await page.keyboard.press("Enter");
      await page.waitForTimeout(50);
    }
  }
  assert.deepEqual(await page.$$eval(`#ex-${order} .ex-order .ex-letter`, (l) => l.map((x) => x.textContent)),
    ["B", "D", "A", "C"]);
  assert.equal(await page.evaluate(() => document.activeElement.id), `ex-${order}-up-3`, "the focus follows D");
  await page.click(`#ex-${order} .ex-check`);
  await page.waitForFunction((i) => /Right/.test(document.querySelector(`#ex-${i} .ex-verdict`).innerText), order);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("make: the goal is met live as the slider moves, and counts as solved", async () => {
  const page = await open("/scoring/");
  const id = "scoring-sharp-without-cooling";
  assert.match(await page.innerText(`#ex-${id} .ex-goal-state`), /Not yet/);
  await setValue(page, "#temperature-gap", 2.5);
  await page.waitForFunction((i) => /Met/.test(document.querySelector(`#ex-${i} .ex-goal-state`).innerText), id);
  assert.ok(await page.$(`#ex-${id}.solved`), "meeting the goal solves it");
  await setValue(page, "#temperature-gap", 1.5);
  await page.waitForFunction((i) => /Not yet/.test(document.querySelector(`#ex-${i} .ex-goal-state`).innerText), id);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("progress survives a reload, shows in the contents, and Reset clears it", async () => {
  const page = await open("/scoring/");
  const id = "scoring-row-softmax";
  await page.fill(`#ex-${id}-answer`, "1/(1+e^2)");
  await page.press(`#ex-${id}-answer`, "Enter");
  await page.waitForSelector(`#ex-${id}.solved`);
  await page.reload();
  await page.waitForSelector("main .exercise");
  assert.ok(await page.$(`#ex-${id}.solved`), "still solved after a reload");
  assert.match(await page.innerText(".ex-progress"), /^1 of 6 exercises solved/);
  const tag = await page.innerText(".toc li:has(a[href='/scoring/']) .ex-tag");
  assert.equal(tag, "1 of 6 exercises");
  await page.goto(base + "/");
  await page.waitForSelector(".toc");
  assert.equal(await page.innerText(".toc li:has(a[href='/scoring/']) .ex-tag"), "1 of 6 exercises");
  await page.goto(base + "/scoring/");
  await page.waitForSelector(".ex-reset");
  await page.click(".ex-reset");
  assert.equal(await page.$$eval("main .exercise.solved", (l) => l.length), 0);
  assert.equal(await page.innerText(".toc li:has(a[href='/scoring/']) .ex-tag"), "0 of 6 exercises");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("an exercise's link opens the chapter at the exercise, with its demo as it was set", async () => {
  const page = await open("/scoring/");
  const id = "scoring-sharp-without-cooling";
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await setValue(page, "#temperature-gap", 1.7);
  await page.click(`#ex-${id} .ex-link`);
  const link = await page.$eval(`#ex-${id} .link-field`, (i) => i.value);
  assert.equal(new URL(link).pathname + new URL(link).search + new URL(link).hash,
    `/scoring/?temperature.gap=1.7#ex-${id}`);
  const other = await newPage(browser, { viewport: { width: 390, height: 844 } });
  await other.goto(link.replace(/^https?:\/\/[^/]+/, base));
  await other.waitForSelector(`#ex-${id}`);
  assert.equal(await other.$eval("#temperature-gap", (s) => s.value), "1.7");
  await other.waitForFunction((i) => {
    const r = document.getElementById(`ex-${i}`).getBoundingClientRect();
    return r.top >= -5 && r.top < innerHeight / 2;
  }, id, { timeout: 5000 });
  assert.deepEqual(other.errors, []);
  await other.context().close();
  await page.context().close();
});

test("print: the questions print, not the answers; ticking Print with solutions adds the answer sheet on its own page", async () => {
  const page = await open("/scoring/");
  // A reader's revealed hint and solution stay on screen only.
  await page.click("#ex-scoring-row-softmax .ex-hint");
  await page.click("#ex-scoring-row-softmax .ex-show-solution");
  await page.emulateMedia({ media: "print" });
  const printed = () => page.evaluate(() => {
    const shown = (e) => getComputedStyle(e).display !== "none" && e.getClientRects().length > 0;
    const sheet = document.querySelector(".ex-answers");
    return {
      questions: [...document.querySelectorAll(".exercise")].filter(shown).length,
      help: [...document.querySelectorAll(".ex-help, .ex-solution, .ex-hints li")].filter(shown).length,
      sheet: shown(sheet),
      sheetItems: sheet.querySelectorAll("li").length,
      newPage: getComputedStyle(sheet).breakBefore,
    };
  });
  const without = await printed();
  assert.equal(without.questions, 6, "every exercise prints");
  assert.equal(without.help, 0, "no hint or solution prints");
  assert.equal(without.sheet, false, "no answer sheet unless asked for");
  await page.emulateMedia({ media: "screen" });
  await page.check(".ex-print-toggle input");
  await page.emulateMedia({ media: "print" });
  const withSheet = await printed();
  assert.deepEqual([withSheet.sheet, withSheet.sheetItems, withSheet.newPage], [true, 6, "page"]);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
