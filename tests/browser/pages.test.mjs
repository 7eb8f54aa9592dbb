// The pages around the chapters: each route's own static HTML (title, Open Graph tags,
// summary) read as a file, not as the rendered page; 404.html; search by keyboard; each
// chapter's references; the notation, bibliography and demo index pages; each chapter's demos'
// code fetched when the chapter opens (the split page), and a chunk that cannot be fetched.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import zlib from "node:zlib";
import { newPage, serveBook, closeBook, ORDER } from "./browser.mjs";

const written = ORDER.filter((c) => c.written);

let server, base, browser, open;
before(async () => ({ server, base, browser, open } = await serveBook()));
after(() => closeBook({ server, browser }));

const decode = (s) => s.replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
  .replace(/&amp;/g, "&");
const meta = (html, attr, name) => {
  const m = html.match(new RegExp(`<meta ${attr}="${name}" content="([^"]*)">`));
  return m && decode(m[1]);
};

test("each chapter's static HTML has its own title, Open Graph tags and a summary", async () => {
  const titles = new Set(), ogTitles = new Set(), summaries = new Set();
  for (const c of written) {
    const res = await fetch(`${base}/${c.slug}/`);
    assert.equal(res.status, 200, c.slug);
    const html = await res.text();
    const title = decode(html.match(/<title>([^<]*)<\/title>/)[1]);
    assert.equal(title, `${c.title} — Attention, live`);
    assert.equal(meta(html, "property", "og:title"), c.title);
    assert.equal(meta(html, "property", "og:url"), `/${c.slug}/`);
    assert.equal(meta(html, "property", "og:type"), "article");
    const desc = meta(html, "name", "description");
    assert.equal(meta(html, "property", "og:description"), desc);
    assert.ok(desc.length > 60 && !desc.includes("$") && !desc.includes("\\"), `${c.slug}: description ${desc}`);
    const summary = html.match(/<p class="static-summary">([^<]*)<\/p>/);
    assert.ok(summary && decode(summary[1]).length > 60, `${c.slug}: summary text in the body`);
    // The summary is the chapter's first paragraph, taken at build time: its first words are
    // the markdown's first words.
    const md = fs.readFileSync(new URL(`../../chapters/${c.slug}.md`, import.meta.url), "utf8");
    const firstWords = md.trim().split(/\s+/).slice(0, 3).join(" ").replace(/[*_`]/g, "");
    assert.ok(decode(summary[1]).startsWith(firstWords), `${c.slug}: summary starts "${firstWords}"`);
    titles.add(title); ogTitles.add(meta(html, "property", "og:title")); summaries.add(summary[1]);
  }
  assert.equal(titles.size, written.length, "titles are distinct");
  assert.equal(ogTitles.size, written.length, "og:titles are distinct");
  assert.equal(summaries.size, written.length, "summaries are distinct");
});

test("the static text gives way to the app, and the app's title follows the chapter", async () => {
  const page = await open("/masking/");
  await page.waitForSelector(".chapter h1");
  assert.equal(await page.$("#static-page"), null, "static text removed on mount");
  assert.equal(await page.title(), "Masking — Attention, live");
  await page.click("a[rel=next]");
  await page.waitForURL("**/self-attention/");
  assert.equal(await page.title(), `${ORDER.find((c) => c.slug === "self-attention").title} — Attention, live`);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("404.html lists every chapter and loads the app's not-found page", async () => {
  const res = await fetch(`${base}/404.html`);
  assert.equal(res.status, 200);
  const html = await res.text();
  for (const c of written) assert.ok(html.includes(`<a href="/${c.slug}/">`), `404.html links ${c.slug}`);
  assert.ok(html.includes(`<a href="/notation/">`) && html.includes(`<a href="/references/">`));
  assert.match(html, /<title>Not found — Attention, live<\/title>/);
  const page = await open("/404.html");
  assert.match(await page.innerText("main"), /No such page/);
  assert.equal(await page.$$eval(".toc li a", (as) => as.length), written.length);
  await page.context().close();
});

test("search: '/' focuses the box, a word finds its chapter, arrows move, Enter opens", async () => {
  const page = await open("/soft-lookup/");
  await page.waitForSelector(".chapter h1");
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement.id), "search-box");
  await page.keyboard.type("Nadaraya");
  await page.waitForSelector("#search-results [role=option]");
  const hits = await page.$$eval("#search-results [role=option]",
    (os) => os.map((o) => ({ text: o.innerText, href: o.getAttribute("href") })));
  assert.ok(hits.length >= 2, `hits: ${hits.length}`);
  assert.match(hits[0].href, /^\/kernel-regression\/#/);
  assert.equal(await page.getAttribute("#search-box", "aria-activedescendant"), "search-hit-0");
  assert.equal(await page.getAttribute("#search-box", "aria-expanded"), "true");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.getAttribute("#search-box", "aria-activedescendant"), "search-hit-1");
  assert.equal(await page.getAttribute("#search-hit-1", "aria-selected"), "true");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("Enter");
  await page.waitForURL(`**${hits[0].href}`);
  await page.waitForSelector(".chapter h1");
  assert.match(await page.innerText(".chapter h1"), /Kernel regression/);
  // the heading the result named is scrolled to, below the sticky header
  const anchor = hits[0].href.split("#")[1];
  await page.waitForFunction((a) => {
    const r = document.getElementById(a)?.getBoundingClientRect();
    return r && r.top >= 0 && r.top < 200;
  }, anchor, { timeout: 5000 });
  assert.equal(await page.inputValue("#search-box"), "", "the box is cleared");
  // "/" typed in a text field is a character, not the shortcut
  await page.focus("#search-box");
  await page.keyboard.type("a/b");
  assert.equal(await page.inputValue("#search-box"), "a/b");
  await page.keyboard.press("Escape");
  assert.equal(await page.inputValue("#search-box"), "");
  // no match says so
  await page.keyboard.type("zzqxv");
  await page.waitForFunction(() => document.querySelector(".search-status")?.textContent.includes("No section"));
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("each chapter ends with a References section with links, and links the notation page", async () => {
  for (const c of written) {
    const page = await open(`/${c.slug}/`);
    await page.waitForSelector(".chapter h1");
    const refs = await page.evaluate(() => {
      const h = [...document.querySelectorAll(".chapter h2")].find((h) => h.textContent.trim() === "References");
      if (!h) return null;
      const later = [...document.querySelectorAll(".chapter h2")]
        .filter((x) => h.compareDocumentPosition(x) & Node.DOCUMENT_POSITION_FOLLOWING);
      const list = h.nextElementSibling;
      return {
        last: later.length === 0,
        items: list?.tagName === "UL" ? list.querySelectorAll("li").length : 0,
        links: list ? [...list.querySelectorAll("a[href^='https://']")].length : 0,
        notation: !!document.querySelector(".chapter .prose a[href='/notation/']"),
      };
    });
    assert.ok(refs, `${c.slug}: no References heading`);
    assert.ok(refs.last, `${c.slug}: References is the last section`);
    assert.ok(refs.items >= 2 && refs.links >= 1, `${c.slug}: ${refs.items} references, ${refs.links} links`);
    assert.ok(refs.notation, `${c.slug}: links the notation page`);
    await page.context().close();
  }
});

test("notation, bibliography and demo index: in the contents' Reference group, linked and complete", async () => {
  const page = await open("/");
  const group = await page.$$eval(".toc-ref a", (as) => as.map((a) => a.getAttribute("href")));
  assert.deepEqual(group, ["/notation/", "/references/", "/demos/"]);
  // not numbered chapters: the chapter list is unchanged
  assert.equal(await page.$$eval(".toc li", (ls) => ls.length), ORDER.length);
  await page.click(".toc-ref a[href='/notation/']");
  await page.waitForSelector("main.reference-page h1");
  assert.equal(await page.innerText("main h1"), "Notation");
  assert.equal(await page.title(), "Notation — Attention, live");
  const text = await page.innerText("main");
  for (const w of ["Tokens are rows", "count from 0", "last axis"]) assert.ok(text.includes(w), `notation says "${w}"`);
  assert.ok(await page.$("main math"), "notation has rendered math");
  // static HTML of the reference pages too
  const html = await (await fetch(`${base}/notation/`)).text();
  assert.equal(meta(html, "property", "og:title"), "Notation");

  const bib = await open("/references/");
  const entries = await bib.$$eval("main .prose li", (ls) => ls.length);
  assert.ok(entries >= 30, `bibliography entries: ${entries}`);
  assert.ok(await bib.$("main .prose li a[href='https://arxiv.org/abs/1706.03762']"), "Vaswani et al. linked");
  assert.ok(await bib.$("main .prose li a[href='/kernel-regression/']"), "entries link back to their chapters");

  const demos = await open("/demos/");
  await demos.waitForSelector(".demo-card");
  const cards = await demos.$$eval(".demo-card", (cs) => cs.map((c) => ({
    id: c.querySelector("code").textContent,
    embed: c.querySelector(".demo-embed input").value,
    chapter: c.querySelector(".demo-card-where a")?.getAttribute("href"),
  })));
  const ids = new Set(cards.map((c) => c.id));
  assert.equal(ids.size, cards.length, "each demo once");
  assert.ok(cards.length >= 20, `demos listed: ${cards.length}`);
  // the build's pictures (scripts/thumbs.mjs): the first card's has loaded
  await demos.waitForFunction(() => document.querySelector(".demo-card img")?.complete);
  assert.ok(await demos.$eval(".demo-card img", (i) => i.naturalWidth >= 320), "thumbnail loaded");
  for (const c of cards) {
    assert.equal(c.embed, `${base}/embed/?demo=${c.id}`);
    assert.ok(c.chapter, `${c.id}: names its chapter`);
  }
  for (const p of [page, bib, demos]) { assert.deepEqual(p.errors, []); await p.context().close(); }
});

test("a chapter fetches its own demos' code and no other chapter's; the first visit's wasm fits its budget", async () => {
  const page = await newPage(browser);
  const fetched = [];
  page.on("request", (r) => { if (r.url().endsWith(".wasm")) fetched.push(r.url().split("/").pop()); });
  await page.goto(`${base}/soft-lookup/`);
  await page.waitForSelector("section.demo#lookup canvas");
  assert.ok(fetched.includes("split_soft_lookup.wasm"), fetched.join(" "));
  assert.deepEqual(fetched.filter((f) => f.startsWith("split_")), ["split_soft_lookup.wasm"], "only this chapter's");
  assert.deepEqual(page.errors, []);
  await page.close();
  // The wasm every page waits for (scripts/build_page.sh); the chunks come after the first paint's.
  const dir = fs.readdirSync(new URL("../../dist", import.meta.url)).find((d) => d.startsWith("page-"));
  const main = fs.readFileSync(new URL(`../../dist/${dir}/attention-live_bg.wasm`, import.meta.url));
  const kib = zlib.gzipSync(main, { level: 9 }).length / 1024;
  assert.ok(kib <= 700, `the page's main wasm is ${kib.toFixed(0)} KiB gzipped, over 700`);
});

test("a demo whose code cannot be fetched says so in its place; the chapter reads on, and a reload draws it", async () => {
  const page = await newPage(browser);
  await page.route("**/split_soft_lookup.wasm", (r) => r.abort("internetdisconnected"));
  await page.goto(`${base}/soft-lookup/`);
  const error = page.locator("section.demo#lookup .notice.error");
  await error.waitFor();
  assert.match(await error.textContent(), /This demo could not be shown: its code could not be fetched/);
  assert.ok((await page.locator("main h2").count()) > 1, "the chapter's prose is there");
  assert.ok(page.errors.length > 0 && page.errors.every((e) => /split_soft_lookup|Failed to fetch|ERR_INTERNET/.test(e)),
    page.errors.join("\n"));
  await page.unroute("**/split_soft_lookup.wasm");
  page.errors.length = 0;
  await page.reload();
  await page.waitForSelector("section.demo#lookup canvas");
  assert.equal(await page.locator("section.demo#lookup .notice.error").count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});
