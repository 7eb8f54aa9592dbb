// Printing a chapter: a clean document. No sidebar, header, toolbars, controls or buttons; every
// plot shown on screen prints, undistorted; display equations fit the page; external links print
// their address; text prints dark on white in either theme; Scoring fits in a bounded number of
// A4 pages (7 when every button and control printed).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveBook, closeBook, mainDrawn, WRITTEN } from "./browser.mjs";

const CHAPTERS = WRITTEN;
// The printed column: A4 (21 cm) less the 1.4 cm side margins of static/style.css's @page, at
// 96 CSS px per inch: 18.2 / 2.54 × 96 = 688 px.
const PAGE_WIDTH = 688;
// Scoring printed on 7 pages with its controls; without them, at 10.5 pt, on 6 (measured), and
// its six exercises (questions and choices, no answers unless asked for) take one page more.
const SCORING_PAGES = 7;
const COLUMN = { viewport: { width: PAGE_WIDTH, height: 1000 } };

// `open(path, opts)`: a chapter in the printed column's width, once its plots have drawn.
let server, browser, open;
before(async () => ({ server, browser, open } = await serveBook({ page: COLUMN, wait: mainDrawn })));
after(() => closeBook({ server, browser }));

const shownCanvases = (page) => page.$$eval("main canvas", (cs) => cs.map((c) => c.getClientRects().length > 0));

test("every chapter prints without navigation or controls, with its plots, equations and links", async () => {
  const bad = [];
  for (const slug of CHAPTERS) {
    const page = await open(`/${slug}/`);
    const onScreen = await shownCanvases(page);
    await page.emulateMedia({ media: "print" });
    await page.waitForTimeout(100);
    const r = await page.evaluate(() => {
      const shown = (e) => getComputedStyle(e).display !== "none" && e.getClientRects().length > 0;
      const chrome = [".site-header", ".sidebar", ".demo-actions", ".controls", ".chapter-nav", "button",
        "input[type=range]", "select"];
      const printed = chrome.flatMap((s) => [...document.querySelectorAll(s)].filter(shown).map(() => s));
      // A plot keeps its bitmap's proportions (a matrix shows the rows in use, in a box).
      const distorted = [...document.querySelectorAll("main canvas.plot:not(.matrix)")].filter(shown)
        .filter((c) => {
          const b = c.getBoundingClientRect(), ratio = c.width / c.height;
          return Math.abs(b.width / b.height - ratio) > 0.03 * ratio;
        })
        .map((c) => c.closest(".demo")?.id);
      const unbreakable = [...document.querySelectorAll("main canvas")].filter(shown)
        .filter((c) => getComputedStyle(c).breakInside !== "avoid").length;
      const wideMath = [...document.querySelectorAll('math[display="block"]')]
        .filter((m) => m.scrollWidth > m.clientWidth + 1).map((m) => m.textContent.slice(0, 40));
      const links = [...document.querySelectorAll('.prose a[href^="http"]')]
        .filter((a) => !getComputedStyle(a, "::after").content.includes(a.getAttribute("href"))).map((a) => a.href);
      return { printed, distorted, unbreakable, wideMath, links,
        canvases: [...document.querySelectorAll("main canvas")].map((c) => c.getClientRects().length > 0) };
    });
    const lost = onScreen.filter((s, i) => s && !r.canvases[i]).length;
    if (r.printed.length) bad.push(`/${slug}/ prints ${[...new Set(r.printed)].join(", ")}`);
    if (lost) bad.push(`/${slug}/ ${lost} plots shown on screen do not print`);
    if (r.distorted.length) bad.push(`/${slug}/ plots stretched in ${r.distorted.join(", ")}`);
    if (r.unbreakable) bad.push(`/${slug}/ ${r.unbreakable} plots may be split across pages`);
    if (r.wideMath.length) bad.push(`/${slug}/ equations wider than the page: ${r.wideMath.join(" | ")}`);
    if (r.links.length) bad.push(`/${slug}/ links printed without their address: ${r.links.join(" ")}`);
    await page.context().close();
  }
  assert.deepEqual(bad, []);
});

test("printed text is dark on white in the dark theme too", async () => {
  const page = await open("/scoring/", { ...COLUMN, colorScheme: "dark" });
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
  await page.emulateMedia({ media: "print" });
  const [fg, bg] = await page.$eval(".prose p", (p) =>
    [getComputedStyle(p).color, getComputedStyle(document.body).backgroundColor]);
  assert.equal(fg, "rgb(0, 0, 0)");
  assert.equal(bg, "rgb(255, 255, 255)");
  await page.context().close();
});

test(`Scoring prints on at most ${SCORING_PAGES} A4 pages`, async () => {
  const page = await open("/scoring/");
  const pdf = await page.pdf({ format: "A4" });
  // One "/Type /Page" object per page ("/Type /Pages" is the page tree).
  const pages = (pdf.toString("latin1").match(/\/Type\s*\/Page(?!s)/g) || []).length;
  assert.ok(pages >= 3 && pages <= SCORING_PAGES, `Scoring prints on ${pages} pages`);
  await page.context().close();
});
