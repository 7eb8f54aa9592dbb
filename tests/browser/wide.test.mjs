// Wide content in every chapter, at a laptop's width (1280 px) and a phone's (390 px), with
// every demo's number tables shown: nothing is cut off without a way to scroll to it, and
// every box that scrolls shows a cue (a shadow at each edge with more beyond it).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveBook, closeBook, drawn, mainDrawn, WRITTEN } from "./browser.mjs";

const CHAPTERS = WRITTEN;

let server, browser, open;
before(async () => ({ server, browser, open } = await serveBook()));
after(() => closeBook({ server, browser }));


// Runs in the page: one line per element cut off, per hidden part, per scroller with no cue.
const CLIPPED = () => {
  const out = [];
  // Boxes that hide part of their content on purpose: self-attn's 8 × 8 field table shows its
  // top-left n × d (the rest is aria-hidden and out of the Tab order), and a matrix canvas
  // keeps spare rows below its drawing; text for screen readers only is a 1-pixel clip.
  const INTENDED = ".x-cells-clip, .matrix-clip, .visually-hidden";
  const FIELD = new Set(["INPUT", "TEXTAREA", "SELECT"]); // they scroll their own text
  const scrolls = (v) => v === "auto" || v === "scroll";
  const describe = (e) => {
    const names = typeof e.className === "string" ? e.className.trim().split(/\s+/).filter(Boolean) : [];
    const cls = names.map((n) => "." + n).join("");
    return `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}${cls}`;
  };
  const where = (e) => e.closest(".demo")?.id || "prose";
  // The nearest ancestor that does not let content overflow sideways.
  const clipper = (e) => {
    for (let a = e.parentElement; a; a = a.parentElement) if (getComputedStyle(a).overflowX !== "visible") return a;
    return null;
  };
  const vw = document.documentElement.clientWidth;
  for (const e of document.querySelectorAll("main *")) {
    if (e.closest(INTENDED)) continue;
    const cs = getComputedStyle(e);
    if (cs.display === "none" || cs.display === "contents" || e.getClientRects().length === 0) continue;
    // Its own content hidden: larger than the box, which neither shows nor scrolls it.
    const field = FIELD.has(e.tagName);
    const hides = (inner, box, overflow) =>
      !field && box > 0 && inner > box + 1 && !scrolls(overflow) && overflow !== "visible";
    if (hides(e.scrollWidth, e.clientWidth, cs.overflowX))
      out.push(`${where(e)}: ${describe(e)} hides ${e.scrollWidth - e.clientWidth}px (overflow-x: ${cs.overflowX})`);
    if (hides(e.scrollHeight, e.clientHeight, cs.overflowY))
      out.push(`${where(e)}: ${describe(e)} hides ${e.scrollHeight - e.clientHeight}px below `
        + `(overflow-y: ${cs.overflowY})`);
    // A box that scrolls shows that it does (a shadow at the edge with more beyond it).
    const sx = scrolls(cs.overflowX) && e.scrollWidth > e.clientWidth + 1;
    const sy = scrolls(cs.overflowY) && e.scrollHeight > e.clientHeight + 1;
    const cue = cs.backgroundAttachment.includes("local") && cs.backgroundImage.includes("gradient");
    if (!field && (sx || sy) && !cue)
      out.push(`${where(e)}: ${describe(e)} scrolls ${sx ? "sideways" : "down"} with no cue`);
    // Sticking out of the nearest box that cuts overflow off, when that box does not scroll.
    const c = clipper(e);
    if (c && scrolls(getComputedStyle(c).overflowX)) continue;
    let lo = 0, hi = vw;
    if (c && c !== document.body && c !== document.documentElement) {
      const b = c.getBoundingClientRect();
      lo = b.left + c.clientLeft; hi = lo + c.clientWidth;
    }
    const r = e.getBoundingClientRect();
    if (r.width > 0 && (r.right > hi + 1 || r.left < lo - 1))
      out.push(`${where(e)}: ${describe(e)} spans ${Math.round(r.left)}–${Math.round(r.right)}px, `
        + `cut off at ${Math.round(lo)}–${Math.round(hi)}px by ${c ? describe(c) : "the page"}`);
  }
  return [...new Set(out)];
};

for (const width of [1280, 390]) {
  test(`no content cut off or scrolling without a cue, every chapter at ${width} px`, async () => {
    const bad = [];
    for (const slug of CHAPTERS) {
      const page = await open(`/${slug}/`, { viewport: { width, height: 900 } }, mainDrawn);
      // Prose far from the viewport is not laid out (content-visibility: auto): lay it all out.
      await page.addStyleTag({ content: ".chapter > .prose { content-visibility: visible !important; }" });
      await page.$$eval(".demo .show-numbers", (bs) => bs.forEach((b) => b.click()));
      await drawn(page);
      for (const line of await page.evaluate(CLIPPED)) bad.push(`/${slug}/ ${line}`);
      await page.context().close();
    }
    assert.deepEqual(bad, [], `at ${width} px:\n${bad.join("\n")}`);
  });
}
