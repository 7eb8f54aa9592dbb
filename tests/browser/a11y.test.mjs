// Accessibility, measured by axe-core in the real page: the home page and every chapter, in the
// light and the dark theme, once the demos have drawn. Fails listing every violation of
// serious or critical impact (contrast, names, keyboard reach, nesting), and every violation at
// all of the rules this book once broke (empty table headers included), so none comes back.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveBook, closeBook, mainDrawn, ORDER, ROOT } from "./browser.mjs";

const AXE = `${ROOT}/node_modules/axe-core/axe.min.js`;
const ROUTES = ["/", ...ORDER.map((c) => `/${c.slug}/`)];
// Held to zero whatever axe calls their impact.
const ALWAYS = ["color-contrast", "label-content-name-mismatch", "scrollable-region-focusable", "nested-interactive",
  "empty-table-header", "aria-allowed-attr", "button-name", "label", "link-name", "image-alt"];

let server, browser, open;
before(async () => ({ server, browser, open } = await serveBook()));
after(() => closeBook({ server, browser }));


/// axe's violations on the page at `route` in `scheme`, as "rule (impact): target — summary" lines.
async function audit(route, scheme, width) {
  // bypassCSP: axe is injected as an inline script, which the site's policy rightly blocks.
  const opts = { viewport: { width, height: 900 }, colorScheme: scheme, bypassCSP: true };
  const page = await open(route, opts, mainDrawn);
  // Prose far from the viewport skips rendering (content-visibility: auto); axe's contrast
  // check reads the rendered page, so every run is rendered while it looks.
  await page.addStyleTag({ content: ".chapter > .prose { content-visibility: visible !important; }" });
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    // label-content-name-mismatch is marked experimental in axe, hence off unless asked for.
    const r = await window.axe.run(document, { rules: { "label-content-name-mismatch": { enabled: true } } });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({
      target: n.target.join(" "), summary: (n.failureSummary || "").split("\n").slice(1).join(" ").trim().slice(0, 200),
    })) }));
  });
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), scheme, `${route}: theme`);
  await page.context().close();
  return violations;
}

// Both themes on a laptop; on a phone (where equations and tables scroll sideways), the light one.
for (const [scheme, width] of [["light", 1280], ["dark", 1280], ["light", 390]]) {
  test(`axe-core: no serious or critical violation on any page, ${scheme} theme, ${width} px`, async () => {
    const bad = [];
    for (const route of ROUTES) {
      for (const v of await audit(route, scheme, width)) {
        if (!["serious", "critical"].includes(v.impact) && !ALWAYS.includes(v.id)) continue;
        for (const n of v.nodes) bad.push(`${route} ${v.id} (${v.impact}): ${n.target} — ${n.summary}`);
      }
    }
    assert.deepEqual(bad, [], `${bad.length} violations (${scheme} theme, ${width} px):\n${bad.join("\n")}`);
  });
}
