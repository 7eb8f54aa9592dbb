// Walks every demo of every written chapter in the real page: one control changes its plot
// and the URL; "Copy link" restores the demo in a fresh browser context. Also recomputes
// exported numbers for the scoring and masking demos.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  newPage, paints, waitPaints, settledUrl, serveBook, closeBook, WRITTEN, DESKTOP, downloadJson,
} from "./browser.mjs";

let server, browser, open;
before(async () => ({ server, browser, open } = await serveBook()));
after(() => closeBook({ server, browser }));

const snapshot = (page, id) => page.$eval(`#${id}`, (d) => ({
  controls: [...d.querySelectorAll(".controls input, .controls select")].map((e) => e.type === "checkbox" ? e.checked : e.value),
  canvases: [...d.querySelectorAll("canvas")].filter((c) => c.width > 0 && c.offsetParent).map((c) => {
    // A matrix grid's canvas keeps spare rows below its drawing (it only grows, to avoid a
    // reallocation per move) and says how many are in use: compare that part only.
    const used = Number(c.dataset.usedH || c.height);
    if (used >= c.height) return c.toDataURL();
    const part = document.createElement("canvas");
    [part.width, part.height] = [c.width, used];
    part.getContext("2d").drawImage(c, 0, 0, c.width, used, 0, 0, c.width, used);
    return part.toDataURL();
  }),
}));

// Demos that fetch weights or ask a worker say "Loading…" or "Computing…" until their data is in.
async function settled(page, id) {
  await page.waitForFunction((id) => ![...document.querySelectorAll(`#${id} [role=status]`)].some((e) => /^(Loading|Computing)/.test(e.textContent)), id, { timeout: 60000 });
  await page.waitForTimeout(100);
}

test("every demo: a control changes its plot and the URL, and its link restores it elsewhere", async () => {
  let demos = 0;
  for (const slug of WRITTEN) {
    const page = await open(`/${slug}/`, DESKTOP, ".demo canvas");
    await page.waitForTimeout(300);
    const ids = await page.$$eval(".demo", (ds) => ds.map((d) => d.id));
    for (const id of ids) {
      demos++;
      await settled(page, id);
      const before = await snapshot(page, id);
      const p0 = await paints(page);
      // the first slider, else the first select, else the first checkbox
      const moved = await page.$eval(`#${id}`, (d) => {
        const r = d.querySelector(".controls input[type=range]");
        if (r) {
          const old = r.value;
          r.value = String(Number(r.min) + 0.37 * (Number(r.max) - Number(r.min)));
          if (r.value === old) r.value = old === r.max ? r.min : r.max; // must be a change
          r.dispatchEvent(new Event("input", { bubbles: true }));
          return r.id;
        }
        const s = d.querySelector(".controls select");
        if (s) { s.selectedIndex = (s.selectedIndex + 1) % s.options.length; s.dispatchEvent(new Event("change", { bubbles: true })); return s.id; }
        const c = d.querySelector(".controls input[type=checkbox]");
        if (c) { c.click(); return c.id; }
        // A demo driven by text only (a word to read): shorten it.
        const t = d.querySelector(".controls input[type=text], .controls textarea");
        t.value = t.value.slice(0, Math.max(1, Math.floor(t.value.length / 2)));
        t.dispatchEvent(new Event("input", { bubbles: true }));
        return t.id;
      });
      await waitPaints(page, p0, 1).catch((e) => { throw new Error(`${slug}#${id}: moving ${moved} did not redraw (${e.message})`); });
      await page.waitForTimeout(50);
      const after = await snapshot(page, id);
      assert.notDeepEqual(after.canvases, before.canvases, `${slug}#${id}: moving ${moved} changed no plot`);
      assert.ok([...new URL(await settledUrl(page)).searchParams.keys()].some((k) => k.startsWith(`${id}.`)), `${slug}#${id}: URL holds its state`);
      await page.click(`#${id} .copy-link`);
      const link = await page.$eval(`#${id} .link-field`, (e) => e.value);
      const fresh = await newPage(browser, { viewport: { width: 1280, height: 900 } });
      await fresh.goto(link);
      await fresh.waitForSelector(`#${id} canvas`);
      await settled(fresh, id);
      // A demo whose numbers come from a worker or a file (GPT-2, wpe) draws when they arrive,
      // which may take seconds on a busy machine: the restored state must be reached, in time.
      let restored;
      for (const t0 = Date.now(); Date.now() - t0 < 30000; await fresh.waitForTimeout(250)) {
        restored = await snapshot(fresh, id);
        if (JSON.stringify(restored) === JSON.stringify(after)) break;
      }
      assert.deepEqual(restored, after, `${slug}#${id}: the link restores the demo`);
      assert.deepEqual(fresh.errors, []);
      await fresh.context().close();
    }
    assert.deepEqual(page.errors, [], slug);
    await page.context().close();
  }
  assert.ok(demos >= 11, `walked ${demos} demos`);
});

async function data(path, id) {
  const page = await open(path, {}, `#${id} canvas`);
  const d = await downloadJson(page, id);
  await page.context().close();
  return d;
}

test("Download data (gauss-dot): the identity and both softmaxes recomputed", async () => {
  const d = await data("/scoring/?gauss-dot.theta=200&gauss-dot.r=2.2", "gauss-dot");
  const o = d.outputs;
  const t = (200 * Math.PI) / 180;
  assert.ok(Math.abs(o.q[0] - 2.2 * Math.cos(t)) < 1e-12 && Math.abs(o.q[1] - 2.2 * Math.sin(t)) < 1e-12);
  const softmax = (s) => { const m = Math.max(...s); const e = s.map((x) => Math.exp(x - m)); const z = e.reduce((a, b) => a + b); return e.map((x) => x / z); };
  const g = o.keys.map((k) => -0.5 * ((o.q[0] - k[0]) ** 2 + (o.q[1] - k[1]) ** 2));
  const dot = o.keys.map((k) => o.q[0] * k[0] + o.q[1] * k[1]);
  g.forEach((v, i) => {
    assert.ok(Math.abs(v - o.gauss[i]) < 1e-12);
    assert.ok(Math.abs(v - (dot[i] - 0.5 * (o.keys[i][0] ** 2 + o.keys[i][1] ** 2) - 0.5 * 2.2 ** 2)) < 1e-12, "the identity");
  });
  softmax(g).forEach((w, i) => assert.ok(Math.abs(w - o.w_gauss[i]) < 1e-12));
  softmax(dot).forEach((w, i) => assert.ok(Math.abs(w - o.w_dot[i]) < 1e-12));
});

test("Download data (padding): masked softmax recomputed; −∞ rows are reported, −10⁶ rows are uniform", async () => {
  for (const fill of ["neginf", "big"]) {
    const d = await data(`/masking/?padding.v1=0&padding.v2=3&padding.v3=1&padding.fill=${fill}`, "padding");
    for (const s of d.outputs.sequences) {
      s.masked.forEach((row, i) => {
        // JSON has no −∞: serde writes null for it
        const scores = row.map((x) => (x === null ? -Infinity : x));
        const m = Math.max(...scores);
        if (m === -Infinity) {
          assert.equal(s.defined[i], false, "fully masked with −∞: no softmax");
          assert.ok(s.weights[i].every((w) => w === 0));
          return;
        }
        const e = scores.map((x) => Math.exp(x - m)); const z = e.reduce((a, b) => a + b);
        e.forEach((x, j) => assert.ok(Math.abs(x / z - s.weights[i][j]) < 1e-12));
        if (s.valid > 0) assert.ok(s.weights[i].slice(s.valid).every((w) => w === 0), "padding weight exactly 0");
      });
      if (s.valid === 0 && fill === "big") assert.ok(s.weights.flat().every((w) => Math.abs(w - 0.25) < 1e-12));
    }
  }
});

test("Download data (sinusoidal, rope): the table, the similarities and RoPE's offset property recomputed", async () => {
  const d = await data("/positional/?sinusoidal.d=16&sinusoidal.base=1000&sinusoidal.len=20", "sinusoidal");
  const o = d.outputs;
  assert.equal(o.table.length, 20);
  o.table.forEach((row, pos) => row.forEach((v, j) => {
    const i2 = j - (j % 2);
    const angle = pos / Math.pow(1000, i2 / 16);
    assert.ok(Math.abs(v - (j % 2 === 0 ? Math.sin(angle) : Math.cos(angle))) < 1e-12, `PE(${pos}, ${j})`);
  }));
  o.similarity.forEach((row, p) => row.forEach((v, q) => {
    const dot = o.table[p].reduce((a, x, j) => a + x * o.table[q][j], 0);
    assert.ok(Math.abs(v - dot) < 1e-9);
  }));
  const r = (await data("/positional/?rope.m=7&rope.n=3", "rope")).outputs;
  for (let a = 1; a < 32; a++) for (let b = 1; b < 32; b++) assert.ok(Math.abs(r.scores[a][b] - r.scores[a - 1][b - 1]) < 1e-9, "constant along diagonals");
  assert.equal(r.score, r.scores[7][3]);
});
