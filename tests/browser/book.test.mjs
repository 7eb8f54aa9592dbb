// The real page in headless Chromium, served from dist/ by a plain static server (no SPA
// fallback). Run by scripts/test.sh after the release build.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import {
  newPage, paints, waitPaints, settledUrl, serveBook, closeBook, ORDER, setValue, canvasData, downloadJson,
} from "./browser.mjs";

let server, base, browser, open;
before(async () => ({ server, base, browser, open } = await serveBook()));
after(() => closeBook({ server, browser }));

test("every route loads with zero console errors and no raw LaTeX", async () => {
  const routes = ["/", "/embed/?demo=nw", ...ORDER.map((c) => `/${c.slug}/`)];
  for (const r of routes) {
    const page = await open(r);
    await page.waitForTimeout(300);
    const text = await page.evaluate(() => document.body.innerText);
    assert.deepEqual(page.errors, [], `${r}: console errors`);
    for (const raw of ["$", "\\frac", "\\sum", "\\alpha", "{{demo"]) assert.ok(!text.includes(raw), `${r} shows raw ${raw}`);
    const c = ORDER.find((c) => `/${c.slug}/` === r);
    if (c) assert.ok(text.includes(c.title), `${r} shows its title`);
    if (c?.written) assert.ok(await page.$("math"), `${r} has rendered math`);
    await page.context().close();
  }
});

test("home page: pitch, contents with 'coming' markers, start link", async () => {
  const page = await open("/");
  const items = await page.$$eval(".toc li", (ls) => ls.map((l) => l.innerText));
  assert.equal(items.length, ORDER.length);
  ORDER.forEach((c, i) => assert.equal(items[i].includes("coming"), !c.written, c.slug));
  await page.click("a.start");
  await page.waitForSelector(".chapter h1");
  assert.equal(new URL(await settledUrl(page)).pathname, `/${ORDER.find((c) => c.written).slug}/`);
  await page.context().close();
});

test("deep link without SPA fallback: server 404s unknown paths, chapter URLs load directly", async () => {
  const res = await fetch(base + "/no-such-page/");
  assert.equal(res.status, 404, "the test server has no fallback");
  const page = await open("/kernel-regression/?nw.sigma=0.2&nw.kernel=epanechnikov#nw");
  await page.waitForSelector("#nw canvas");
  assert.equal(await page.$eval("#nw-kernel", (e) => e.value), "epanechnikov");
  assert.match(await page.$eval("#nw-sigma", (e) => e.closest(".control").querySelector("output").textContent), /^0\.2$/);
  // scrolled to the demo
  const top = await page.$eval("#nw", (e) => e.getBoundingClientRect().top);
  assert.ok(Math.abs(top) < 120, `demo scrolled into view (top ${top})`);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("a slider changes the canvas and the URL while dragging, without adding history or scrolling", async () => {
  const page = await open("/kernel-regression/");
  await page.waitForSelector("#nw canvas");
  await page.waitForTimeout(200);
  const before = await canvasData(page, "#nw canvas");
  const hist = await page.evaluate(() => history.length);
  await page.$eval("#nw", (e) => e.scrollIntoView());
  const y0 = await page.evaluate(() => scrollY);
  const p0 = await paints(page);
  await page.focus("#nw-sigma");
  for (let i = 0; i < 5; i++) await page.keyboard.press("ArrowRight"); // 5 `input` events
  await waitPaints(page, p0, 5);
  assert.notEqual(await canvasData(page, "#nw canvas"), before, "canvas changed");
  // The address is written at most every quarter second while the slider moves: once those
  // 5 moves have settled, it holds the last value, not an earlier one.
  const shown = Number(await page.$eval("#nw-sigma", (e) => e.getAttribute("aria-valuetext")));
  const url = new URL(await settledUrl(page));
  const inUrl = Number(url.searchParams.get("nw.sigma"));
  assert.ok(Math.abs(inUrl - shown) <= 1e-9 * shown, `the URL holds the slider's final value: ${inUrl} vs ${shown}`);
  assert.equal(url.pathname, "/kernel-regression/", "the ← → keys on a slider did not change chapter");
  assert.equal(await page.evaluate(() => history.length), hist, "history not flooded");
  assert.equal(await page.evaluate(() => scrollY), y0, "no scroll jump");
  await page.context().close();
});

test("Copy link restores the exact state after a reload and in a fresh browser context", async () => {
  const page = await open("/kernel-regression/");
  await page.waitForSelector("#nw canvas");
  await page.selectOption("#nw-kernel", "epanechnikov");
  await page.focus("#nw-n");
  for (let i = 0; i < 7; i++) await page.keyboard.press("ArrowRight");
  await page.click("#nw-seed"); // resample: a new random seed
  await page.waitForTimeout(300);
  await page.click("#nw .copy-link");
  const link = await page.waitForSelector("#nw .link-field").then((e) => e.inputValue());
  const u = new URL(link);
  for (const k of ["n", "seed", "kernel", "sigma", "q"]) assert.ok(u.searchParams.has(`nw.${k}`), `link has nw.${k}`);
  assert.equal(u.hash, "#nw");
  const state = async (p) => ({
    readout: await p.$eval("#nw .readout", (e) => e.textContent),
    n: await p.$eval("#nw-n", (e) => e.value),
    kernel: await p.$eval("#nw-kernel", (e) => e.value),
    canvas: await canvasData(p, "#nw canvas"),
  });
  const want = await state(page);
  await page.reload();
  await page.waitForSelector("#nw canvas");
  await page.waitForTimeout(300);
  assert.deepEqual(await state(page), want, "after reload");
  const fresh = await open(link.replace(u.origin, ""), { viewport: page.viewportSize() });
  await fresh.waitForSelector("#nw canvas");
  await fresh.waitForTimeout(300);
  assert.deepEqual(await state(fresh), want, "in a fresh context");
  await page.context().close();
  await fresh.context().close();
});

test("bad URL values show a notice and the defaults; the XSS link runs nothing", async () => {
  const xss = encodeURIComponent("<img src=x onerror=alert(1)>");
  const page = await newPage(browser);
  let dialogs = 0;
  page.on("dialog", (d) => { dialogs++; d.dismiss(); });
  await page.goto(`${base}/kernel-regression/?nw.sigma=banana&nw.n=99999&nw.kernel=${xss}&zz.top=1`);
  await page.waitForSelector("#nw .url-notice");
  const notice = await page.$eval("#nw .url-notice", (e) => e.innerText);
  assert.match(notice, /nw\.sigma="banana".*not a number/);
  assert.match(notice, /nw\.n="99999".*outside the range 5 to 200/);
  assert.ok(notice.includes("<img src=x onerror=alert(1)>"), "the raw text is shown as text");
  assert.match(await page.$eval(".chapter > .url-notice", (e) => e.innerText), /zz\.top/);
  assert.equal(await page.$eval("#nw-kernel", (e) => e.value), "gaussian");
  assert.equal(await page.$eval("#nw-n", (e) => e.value), "40");
  assert.equal(await page.$$eval("img", (l) => l.length), 0, "no <img> element was created");
  // lookup's free-text query from a link is shown as text too
  await page.goto(`${base}/soft-lookup/?lookup.q=${xss}`);
  await page.waitForSelector("#lookup canvas");
  assert.equal(await page.$eval("#lookup-q", (e) => e.value), "<img src=x onerror=alert(1)>");
  await page.waitForTimeout(300);
  assert.equal(dialogs, 0, "no alert ran");
  assert.equal(await page.$$eval("img", (l) => l.length), 0);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("Download data (nw): the test recomputes the Nadaraya-Watson estimate from the exported data", async () => {
  const page = await open("/kernel-regression/?nw.sigma=0.3&nw.n=60&nw.q=1.7");
  await page.waitForSelector("#nw canvas");
  const d = await downloadJson(page, "nw");
  assert.equal(d.demo, "nw");
  assert.deepEqual(d.inputs, { n: 60, seed: 1, kernel: "gaussian", sigma: 0.3, q: 1.7 });
  const o = d.outputs;
  assert.equal(o.x_train.length, 60);
  const sigma = d.inputs.sigma;
  // Independent recomputation: Gaussian weights, normalised, then the weighted mean.
  o.queries.forEach((q, r) => {
    const k = o.x_train.map((x) => Math.exp(-((q - x) ** 2) / (2 * sigma * sigma)));
    const z = k.reduce((a, b) => a + b, 0);
    const f = k.reduce((a, ki, i) => a + (ki / z) * o.y_train[i], 0);
    assert.ok(Math.abs(f - o.estimate[r]) < 1e-9, `f(${q}): ${f} vs ${o.estimate[r]}`);
    const rowSum = o.weights[r].reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(rowSum - 1) < 1e-12, "row sums to 1");
    assert.ok(Math.abs(o.truth[r] - (2 * Math.sin(q) + q)) < 1e-12, "truth");
  });
  // the data really come from y = 2 sin x + x + noise: residual variance near 1
  const res = o.x_train.map((x, i) => o.y_train[i] - (2 * Math.sin(x) + x));
  const v = res.reduce((a, e) => a + e * e, 0) / res.length;
  assert.ok(v > 0.4 && v < 2.0, `noise variance ${v}`);
  await page.context().close();
});

test("Download data (lookup): bigram cosine, softmax and blend recomputed in JavaScript", async () => {
  const page = await open("/soft-lookup/?lookup.q=gren&lookup.beta=7");
  await page.waitForSelector("#lookup canvas");
  const d = await downloadJson(page, "lookup");
  const bigrams = (w) => { const s = ["⟨", ...w.toLowerCase(), "⟩"]; const m = new Map(); for (let i = 0; i + 1 < s.length; i++) { const g = s[i] + s[i + 1]; m.set(g, (m.get(g) || 0) + 1); } return m; };
  const cos = (a, b) => { const A = bigrams(a), B = bigrams(b); let dot = 0; for (const [g, c] of A) dot += c * (B.get(g) || 0); const n = (M) => Math.sqrt([...M.values()].reduce((s, c) => s + c * c, 0)); return dot / (n(A) * n(B)); };
  const s = d.outputs.keys.map((k) => cos("gren", k));
  s.forEach((v, i) => assert.ok(Math.abs(v - d.outputs.scores[i]) < 1e-12, d.outputs.keys[i]));
  const e = s.map((v) => Math.exp(7 * v)); const z = e.reduce((a, b) => a + b, 0);
  e.forEach((v, i) => assert.ok(Math.abs(v / z - d.outputs.weights[i]) < 1e-12));
  assert.equal(d.outputs.keys[d.outputs.weights.indexOf(Math.max(...d.outputs.weights))], "green");
  await page.context().close();
});

test("Download image gives a PNG; Show numbers gives tables; Reset restores defaults", async () => {
  const page = await open("/soft-lookup/?lookup.beta=55");
  await page.waitForSelector("#lookup canvas");
  const [dl] = await Promise.all([page.waitForEvent("download"), page.click("#lookup .download-image")]);
  const png = fs.readFileSync(await dl.path());
  assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], "PNG signature");
  await page.click("#lookup .show-numbers");
  const rows = await page.$$eval("#lookup table.numbers tbody tr", (r) => r.length);
  assert.equal(rows, 13);
  await page.click("#lookup .reset");
  await page.waitForTimeout(100);
  assert.equal(await page.$eval("#lookup-beta", (e) => e.value), "10");
  await page.context().close();
});

test("a link puts a logarithmic slider's thumb where the sender's was, so the next key press agrees", async () => {
  // Each slider at a position whose value, rounded for the link, used to land one step lower.
  for (const [path, id, key, at] of [
    ["/kernel-regression/", "kernels-sigma", "kernels.sigma", 0.63],
    ["/scoring/", "temperature-t", "temperature.t", 0.5],
    ["/positional/", "sinusoidal-d", "sinusoidal.d", 0.5],
    ["/scoring/", "scaling-d", "scaling.d", 0.6],
  ]) {
    const sender = await open(path);
    await sender.waitForSelector(`#${id}`);
    const max = Number(await sender.$eval(`#${id}`, (e) => e.max));
    const pos = String(Math.round(at * max));
    await setValue(sender, `#${id}`, pos);
    const value = await sender.$eval(`#${id}`, (e) => e.getAttribute("aria-valuetext"));
    await sender.focus(`#${id}`);
    await sender.keyboard.press("ArrowRight");
    const next = await sender.$eval(`#${id}`, (e) => e.getAttribute("aria-valuetext"));
    assert.notEqual(next, value, `${key}: every step of the slider is a new value`);
    const receiver = await open(`${path}?${key}=${value}`);
    await receiver.waitForSelector(`#${id}`);
    const thumb = await receiver.$eval(`#${id}`, (e) => e.value);
    assert.equal(thumb, pos, `${key}=${value}: the thumb where the sender's was`);
    await receiver.focus(`#${id}`);
    await receiver.keyboard.press("ArrowRight");
    const after = await receiver.$eval(`#${id}`, (e) => e.getAttribute("aria-valuetext"));
    assert.equal(after, next, `${key}: the next step`);
    for (const p of [sender, receiver]) { assert.deepEqual(p.errors, []); await p.context().close(); }
  }
});

test("embed link shows only the demo; caption=0 hides the caption", async () => {
  const page = await open("/embed/?demo=kernels&caption=0&kernels.sigma=2");
  await page.waitForSelector("#kernels canvas");
  assert.equal(await page.$(".chapter"), null, "no chapter prose");
  assert.equal(await page.$("#kernels .caption"), null, "caption hidden");
  assert.equal(await page.$eval("#kernels-sigma", (e) => e.getAttribute("aria-valuetext")), "2");
  const withCap = await open("/embed/?demo=kernels");
  await withCap.waitForSelector("#kernels .caption");
  const bad = await open("/embed/?demo=nope");
  assert.match(await bad.innerText("main"), /No such demo/);
  for (const p of [page, withCap, bad]) { assert.deepEqual(p.errors, []); await p.context().close(); }
});

test("keyboard: ← and → move between chapters; theme toggle is remembered", async () => {
  const written = ORDER.filter((c) => c.written);
  const page = await open(`/${written[0].slug}/`);
  await page.keyboard.press("ArrowRight");
  await page.waitForURL(`**/${written[1].slug}/`);
  await page.keyboard.press("ArrowLeft");
  await page.waitForURL(`**/${written[0].slug}/`);
  const theme0 = await page.evaluate(() => document.documentElement.dataset.theme);
  await page.click(".theme-toggle");
  const theme1 = await page.evaluate(() => document.documentElement.dataset.theme);
  assert.notEqual(theme1, theme0);
  await page.reload();
  await page.waitForSelector("main");
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), theme1);
  // opening two chapters is not reading them (polish.test.mjs reads one to its end)
  await page.goto(base + "/");
  await page.waitForSelector(".toc");
  assert.match(await page.innerText(".toc-progress"), /Read 0 of/);
  await page.context().close();
});

test("every control has a visible label and an accessible name", async () => {
  for (const c of ORDER.filter((c) => c.written)) {
    const page = await open(`/${c.slug}/`);
    await page.waitForSelector(".demo");
    const unlabeled = await page.$$eval(".demo input, .demo select, .demo button", (els) =>
      els.filter((e) => {
        if (e.type === "hidden") return false;
        const label = e.id && document.querySelector(`label[for="${e.id}"]`);
        const name = (label && label.innerText.trim()) || e.getAttribute("aria-label") || e.innerText?.trim() || e.closest("label")?.innerText.trim();
        return !name;
      }).map((e) => e.outerHTML.slice(0, 80)));
    assert.deepEqual(unlabeled, [], c.slug);
    await page.context().close();
  }
});

test("phone width (390 px): no horizontal overflow on any written chapter", async () => {
  for (const c of ORDER.filter((c) => c.written)) {
    const page = await open(`/${c.slug}/`, { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    await page.waitForSelector(".demo canvas");
    await page.waitForTimeout(300);
    const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(over <= 0, `${c.slug}: page is ${over}px wider than the screen`);
    fs.mkdirSync(new URL("./out", import.meta.url), { recursive: true });
    await page.screenshot({ path: new URL(`./out/phone-${c.slug}.png`, import.meta.url).pathname, fullPage: true });
    await page.context().close();
  }
});

test("prose far from the viewport is skipped, and the page keeps its true length as the reader scrolls", async () => {
  // At phone width self-attention's prose runs are far taller than the 600px guess for a run
  // never laid out: the chapter lays every run out before skipping any (static/style.css).
  const page = await open("/self-attention/", { viewport: { width: 390, height: 844 } });
  await page.waitForSelector("main.chapter.laid-out");
  const height = () => page.evaluate(() => document.documentElement.scrollHeight);
  const before = await height();
  const skipped = await page.$$eval(".chapter > .prose", (ps) => ps.filter((p) => getComputedStyle(p).contentVisibility === "auto").length);
  assert.ok(skipped >= 2, `prose runs with content-visibility: auto: ${skipped}`);
  for (const f of [0.3, 0.6, 0.9]) {
    await page.evaluate((f) => scrollTo(0, document.documentElement.scrollHeight * f), f);
    await page.waitForTimeout(100);
    assert.equal(await height(), before, `after scrolling to ${f * 100}%`);
  }
  // The same length with every run rendered.
  await page.$$eval(".chapter > .prose", (ps) => ps.forEach((p) => { p.style.contentVisibility = "visible"; }));
  assert.equal(await height(), before, "with every prose run rendered");
  await page.context().close();
});

test("self-attention: typed cells of X change the matrices and the link, bad input is refused in place, a link restores them", async () => {
  const page = await open("/self-attention/");
  await page.waitForSelector("#self-attn .x-cells input");
  const canvas = () => canvasData(page, "#self-attn canvas");
  const before = await canvas();
  // Row 1 := row 2 in stage 2: the two tokens then get the same weights (hand check below).
  await page.selectOption("#self-attn-stage", "xx");
  const row2 = await page.$$eval("#self-attn .x-cells tr:nth-child(3) input:not([tabindex='-1'])", (xs) => xs.map((x) => x.value));
  const cells = await page.$$("#self-attn .x-cells tr:nth-child(2) input:not([tabindex='-1'])");
  for (let j = 0; j < cells.length; j++) {
    await cells[j].fill(row2[j]);
    await cells[j].press("Tab");
  }
  await page.waitForTimeout(200);
  assert.notEqual(await canvas(), before, "the matrices were redrawn");
  const x = new URL(await settledUrl(page)).searchParams.get("self-attn.x");
  assert.ok(x && x.split(";")[0] === x.split(";")[1], `both rows in the link: ${x}`);
  // Focus moved on with Tab: the fields were not rebuilt under the keyboard (rows count from 0).
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("aria-label")), "X row 1 column 0");
  // Show numbers: the weights matrix's first two rows are equal.
  await page.click("#self-attn .show-numbers");
  const weights = await page.$$eval("#self-attn table", (ts) => {
    const t = ts.find((t) => /weights softmax/.test(t.querySelector("caption")?.textContent || ""));
    return [...t.querySelectorAll("tbody tr")].map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent));
  });
  assert.deepEqual(weights[0].slice(1), weights[1].slice(1), "equal rows of X attend alike");
  // A value out of range: a message in place, nothing else changes.
  const link = await settledUrl(page);
  await cells[0].fill("1000");
  await cells[0].press("Enter");
  assert.match(await page.$eval("#self-attn .x-editor [role=alert]", (e) => e.textContent), /not a number from −99 to 99/);
  assert.equal(await settledUrl(page), link);
  // The link restores the typed X in a fresh context.
  const fresh = await open(link.replace(base, ""));
  await fresh.waitForSelector("#self-attn .x-cells input");
  assert.deepEqual(await fresh.$$eval("#self-attn .x-cells tr:nth-child(2) input:not([tabindex='-1'])", (xs) => xs.map((x) => x.value)), row2);
  // A new input seed draws a new X: the typed cells go, and so does the link's copy.
  await fresh.click("#self-attn-seed");
  await fresh.waitForTimeout(200);
  assert.equal(new URL(await settledUrl(fresh)).searchParams.get("self-attn.x"), null);
  assert.equal(await fresh.$("#self-attn .x-reset"), null);
  await page.context().close();
  await fresh.context().close();
});
