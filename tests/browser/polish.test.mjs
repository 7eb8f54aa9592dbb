// What a careful reader checks on screen: markers under the right ticks, the arrow keys with a
// button focused, the phone layout (folded contents, plots in view while their controls move,
// the actions menu) and reading progress. Run by scripts/test.sh against the release build.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveBook, closeBook, DESKTOP } from "./browser.mjs";

let server, base, browser, open;
before(async () => ({ server, base, browser, open } = await serveBook({ page: DESKTOP })));
after(() => closeBook({ server, browser }));

/// The y value the heatmap's axis gives at the centre of the marker drawn in `rgb` (canvas
/// pixels matching the colour), from the axis the heatmap records as it draws it.
async function markerAxisValue(page, sel, rgb) {
  return page.$eval(sel, (c, rgb) => {
    const [x, y, w, h] = c.dataset.cells.split(" ").map(Number);
    const [top, bottom] = c.dataset.y.split(" ").map(Number);
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let sum = 0, count = 0;
    for (let py = Math.floor(y); py < y + h; py++) {
      for (let px = Math.floor(x); px < x + w; px++) {
        const i = 4 * (py * c.width + px);
        if (Math.abs(d[i] - rgb[0]) < 8 && Math.abs(d[i + 1] - rgb[1]) < 8 && Math.abs(d[i + 2] - rgb[2]) < 8) { sum += py; count++; }
      }
    }
    if (!count) return null;
    return top + ((sum / count) - y) / h * (bottom - top);
  }, rgb);
}

test("the RoPE marker sits on its own tick: row m of the heatmap is labelled m", async () => {
  for (const m of [25, 3]) {
    const page = await open(`/positional/?rope.m=${m}&rope.n=10#rope`);
    await page.waitForFunction(() => document.querySelector("#rope canvas")?.dataset.y);
    const dark = await page.evaluate(() => document.documentElement.dataset.theme === "dark");
    const orange = dark ? [251, 146, 60] : [234, 88, 12]; // the palette's orange (src/kit/theme.rs)
    const v = await markerAxisValue(page, "#rope canvas", orange);
    assert.ok(v !== null, "the marker is drawn");
    assert.equal(Math.floor(v), m, `the axis reads ${v} at the marker for m = ${m}`);
    await page.context().close();
  }
});

test("← and → change chapter only when nothing interactive has the focus", async () => {
  const page = await open("/soft-lookup/");
  // A focused button (the demo's toolbar, a colour chip, Resample): the arrows stay in the page.
  for (const sel of ["#lookup .copy-link", ".key-chip", "button.resample"]) {
    const el = await page.$(sel);
    if (!el) continue;
    await el.focus();
    await page.keyboard.press("ArrowRight");
    await page.waitForTimeout(150);
    assert.match(page.url(), /\/soft-lookup\//, `→ on ${sel} kept the chapter`);
  }
  // With the focus on the page itself, → moves on.
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press("ArrowRight");
  await page.waitForURL("**/kernel-regression/");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("phone: the contents start folded, the actions fold into one menu", async () => {
  const page = await open("/scoring/", { viewport: { width: 390, height: 844 } });
  assert.equal(await page.$eval(".toc-details", (d) => d.open), false, "contents folded on a phone");
  const first = await page.$eval("main.chapter h1", (h) => h.getBoundingClientRect().top);
  assert.ok(first < 844, `the chapter's title is on the first screen (at ${first} px)`);
  const demo = await page.$(".demo");
  assert.equal(await demo.$eval(".demo-actions", (a) => getComputedStyle(a).display), "none");
  await demo.$eval(".demo-menu-toggle", (b) => b.click());
  assert.notEqual(await demo.$eval(".demo-actions", (a) => getComputedStyle(a).display), "none", "the menu opens");
  assert.equal(await demo.$eval(".demo-menu-toggle", (b) => b.getAttribute("aria-expanded")), "true");
  await page.keyboard.press("Escape");
  await page.context().close();
  const wide = await open("/scoring/");
  assert.equal(await wide.$eval(".toc-details", (d) => d.open), true, "contents open beside the chapter on a laptop");
  await wide.context().close();
});

test("phone: a plot stays in view while its slider moves", async () => {
  // The GPT-2 demo has 14 controls, pinned under its plots on a phone, and text above its plots
  // (the model's status, the file picker, how to read the chips): opened at its title, every plot
  // was behind the panel. Reaching for a slider brings one into view above the panel.
  const page = await open("/gpt2-live/#gpt2", { viewport: { width: 390, height: 844 } });
  await page.waitForFunction(() => document.querySelector("#gpt2 .gpt2")?.dataset.analysis > 0, null, { timeout: 60000 });
  const slider = await page.$("#gpt2-head");
  await slider.focus();
  await page.keyboard.press("ArrowRight");
  await page.waitForTimeout(300);
  // Pixels of the best-seen plot between the site's header and the pinned panel.
  const seen = await page.$eval("#gpt2", (demo) => {
    const top = document.querySelector(".site-header").getBoundingClientRect().bottom;
    const bottom = demo.querySelector(".controls").getBoundingClientRect().top;
    return Math.max(...[...demo.querySelectorAll(".demo-view canvas.plot")].map((c) => {
      const r = c.getBoundingClientRect();
      return r.height ? Math.min(r.bottom, bottom) - Math.max(r.top, top) : 0;
    }));
  });
  assert.ok(seen > 120, `a plot shows ${seen} px of itself above the panel while the head slider moves`);
  const s = await slider.boundingBox();
  assert.ok(s.y >= 0 && s.y + s.height <= 844, "the slider is on screen too");
  await page.context().close();
});

test("a chapter counts as read when its end is reached, not when it is opened", async () => {
  const page = await open("/masking/");
  await page.goto(base + "/");
  await page.waitForSelector(".toc-progress");
  assert.match(await page.innerText(".toc-progress"), /Read 0 of/, "opening is not reading");
  await page.goto(base + "/masking/");
  await page.waitForSelector(".chapter-nav");
  await page.$eval(".chapter-nav", (n) => n.scrollIntoView());
  await page.waitForFunction(() => (localStorage.getItem("attention-live:read") || localStorage.getItem("read") || "").includes("masking"));
  await page.goto(base + "/");
  await page.waitForSelector(".toc-progress");
  assert.match(await page.innerText(".toc-progress"), /Read 1 of/);
  assert.ok(await page.$(".toc li.read a[href='/masking/']"), "the contents mark it read");
  await page.context().close();
});

test("phone: the pinned panel shows a demo's main controls first, folds to a bar, and shows the rest on request", async () => {
  // The GPT-2 demo's 14 controls took a third of the screen and nested scrolling; its prompt, layer,
  // head and query token came after the model's source, the comparison and the backend.
  const page = await open("/gpt2-live/#gpt2", { viewport: { width: 390, height: 844 } });
  await page.waitForSelector("#gpt2 .controls .panel-toggle");
  const shown = () => page.$$eval("#gpt2 .controls .control", (cs) => cs.filter((c) => c.getClientRects().length > 0)
    .map((c) => c.querySelector("input, select, textarea, button").id.replace("gpt2-", "")));
  assert.deepEqual(await shown(), ["model", "prompt", "layer", "head", "token"]);
  const panel = () => page.$eval("#gpt2 .controls", (c) => c.getBoundingClientRect().height);
  await page.click("#gpt2 .more-controls");
  assert.equal((await shown()).length, 14, "every control after More controls");
  assert.deepEqual((await shown()).slice(0, 5), ["model", "prompt", "layer", "head", "token"]);
  await page.click("#gpt2 .more-controls");
  // Folded, the panel is a bar with its button; unfolded again, the main controls are back.
  await page.click("#gpt2 .panel-toggle");
  assert.equal(await page.$eval("#gpt2 .panel-toggle", (b) => b.getAttribute("aria-expanded")), "false");
  assert.deepEqual(await shown(), []);
  assert.ok(await panel() < 60, `folded to a bar: ${await panel()} px`);
  await page.click("#gpt2 .panel-toggle");
  assert.equal((await shown()).length, 5);
  // On a laptop the panel shows everything, main controls first, with no panel buttons.
  const wide = await open("/gpt2-live/#gpt2");
  await wide.waitForSelector("#gpt2 .controls .control");
  assert.equal(await wide.$eval("#gpt2 .panel-toggle", (b) => getComputedStyle(b).display), "none");
  const all = await wide.$$eval("#gpt2 .controls .control", (cs) => cs.filter((c) => c.getClientRects().length > 0).length);
  assert.equal(all, 14);
  assert.deepEqual([...page.errors, ...wide.errors], []);
  await page.context().close(); await wide.context().close();
});

test("the training lab's step scrubber sits above its plots, on the first screen of the demo at 1280 × 800", async () => {
  const page = await open("/training/#train-lab", { viewport: { width: 1280, height: 800 } });
  await page.waitForSelector("#train-lab-step");
  assert.equal(await page.$("#train-lab .controls #train-lab-step"), null, "not in the side panel");
  await page.$eval("#train-lab", (d) => d.scrollIntoView());
  const [scrub, plot] = await page.$$eval("#train-lab-step, #train-lab .train-loss", (es) => es.map((e) => e.getBoundingClientRect().top));
  assert.ok(scrub > 0 && scrub < 800, `the scrubber is on screen: ${scrub}`);
  assert.ok(scrub < plot, "above the loss plot");
  await page.context().close();
});
