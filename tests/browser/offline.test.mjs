// Offline reading and updates (static/sw.js, static/offline.js). After one visit the service
// worker has kept the whole site: with the network cut (the browser offline and the server
// stopped) every chapter, a link's state, an embed and the bundled GPT-2 still work, and the page
// says it is offline. A new build served at the same address is offered ("A new version is
// available — Reload"), the page stays on its own version until then, and Reload gives the new one.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch, newPage, WRITTEN, DIST, gpt2Analysed } from "./browser.mjs";
import { startServer } from "./static-server.mjs";

const built = () => JSON.parse(fs.readFileSync(path.join(DIST, "offline.json"), "utf8"));

let browser;
before(async () => { browser = await launch(); });
after(() => browser?.close());

async function stop(server) {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/// Opens `url` with service workers allowed and waits until the worker controls the page: it
/// takes over only once it has stored every file of the build.
async function visit(url) {
  const page = await newPage(browser, { serviceWorkers: "allow", viewport: { width: 1280, height: 900 } });
  await page.goto(url);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60000 });
  return page;
}

test("after one visit, with no network, every chapter, a link, an embed and the bundled GPT-2 work", async () => {
  const { server, url } = await startServer(DIST);
  const page = await visit(`${url}/`);
  // The home page says how much the browser keeps, from the build's own list.
  const note = await page.waitForSelector(".offline-note");
  const { bytes, files } = built();
  assert.match(await note.textContent(), new RegExp(`${(bytes / 1e6).toFixed(1)} MB in ${files.length} files`));
  assert.equal(await page.$("#offline-notice"), null, "online: no offline notice");

  await stop(server);
  await page.context().setOffline(true);
  await page.waitForSelector("#offline-notice", { timeout: 5000 });

  // A chapter opened from a link: its state comes from the query string.
  await page.goto(`${url}/scoring/?gauss-dot.theta=200`);
  await page.waitForSelector("#gauss-dot canvas");
  assert.equal(await page.$eval("#gauss-dot-theta", (e) => e.value), "200");
  await page.waitForFunction(() => (window.__alPaints || 0) > 0);
  assert.match(await page.textContent("#offline-notice"), /offline/);
  // It can be put away: it covers the foot of the text on a phone.
  await page.click("#offline-notice button");
  assert.equal(await page.$("#offline-notice"), null, "hidden");
  // Every chapter opens with its demos, drawn (a frame's figure or its first canvas).
  for (const slug of WRITTEN) {
    await page.goto(`${url}/${slug}/`);
    await page.waitForSelector("main.chapter .demo", { timeout: 20000 });
    await page.waitForFunction(() => (window.__alPaints || 0) > 0 || document.querySelector(".demo canvas"),
      null, { timeout: 20000 });
    assert.equal(await page.$(".demo-missing, .model-failed"), null, slug);
  }
  // A route without its final slash goes to the route, as a static host redirects it.
  await page.goto(`${url}/masking`);
  await page.waitForSelector(".demo canvas");
  assert.equal(new URL(page.url()).pathname, "/masking/");
  // An embed.
  await page.goto(`${url}/embed/?demo=temperature&temperature.t=2`);
  await page.waitForSelector("#temperature canvas");
  // The bundled GPT-2: its worker, engine and weights all come from the browser's copy.
  await page.goto(`${url}/gpt2-live/`);
  await gpt2Analysed(page, 0, 60000, false);
  assert.match(await page.textContent("#gpt2 .model-status"), /4 layers × 4 heads/);
  assert.ok((await page.$$("#gpt2 .chip")).length > 5, "the prompt's tokens are drawn");
  // Only a download needs the network, and it says so.
  await page.selectOption("#gpt2-model", "gpt2");
  await page.waitForSelector("#gpt2 .needs-network");
  assert.ok(await page.$eval("#gpt2 .download-model", (b) => b.disabled), "no download offline");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("a new build at the same address is offered; the page keeps its version until Reload", async () => {
  const next = fs.mkdtempSync(path.join(os.tmpdir(), "attention-live-next-"));
  try {
    let { server, url } = await startServer(DIST);
    const page = await visit(`${url}/masking/`);
    const old = built().version;
    const fresh = "0123456789abcdef";
    // The next build: the same site with another version and a changed chapter page.
    fs.cpSync(DIST, next, { recursive: true });
    for (const f of ["sw.js", "offline.json"]) {
      const file = path.join(next, f);
      fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(`"version":"${old}"`, `"version":"${fresh}"`));
    }
    const chapter = path.join(next, "masking/index.html");
    const marker = '<meta name="build" content="next">\n  <title>';
    fs.writeFileSync(chapter, fs.readFileSync(chapter, "utf8").replace("<title>", marker));
    await stop(server);
    ({ server } = await startServer(next, Number(new URL(url).port)));

    const version = () => page.evaluate(async () => (await (await fetch("/offline.json")).json()).version);
    const marked = () => page.evaluate(() => document.querySelector('meta[name="build"]')?.content ?? null);
    // Visiting again: the browser finds the changed sw.js, installs the new version beside the
    // old one and the page offers it.
    await page.reload();
    await page.waitForSelector("#update-notice button", { timeout: 60000 });
    assert.match(await page.textContent("#update-notice"), /A new version is available/);
    // Until the reader reloads, every file is still the first version's.
    await page.reload();
    assert.equal(await marked(), null);
    assert.equal(await version(), old);
    await page.waitForSelector("#update-notice button", { timeout: 30000 });

    await Promise.all([page.waitForEvent("load", { timeout: 30000 }), page.click("#update-notice button")]);
    await page.waitForSelector("main");
    assert.equal(await marked(), "next");
    assert.equal(await version(), fresh);
    assert.equal(await page.$("#update-notice"), null);
    // The first version's cache is gone; the reader's downloaded models would be kept.
    const names = await page.evaluate(() => caches.keys());
    assert.deepEqual(names.filter((n) => n.startsWith("attention-live-shell-")), [`attention-live-shell-${fresh}`]);
    assert.deepEqual(page.errors, []);
    await page.context().close();
    await stop(server);
  } finally {
    fs.rmSync(next, { recursive: true, force: true });
  }
});
