// Pictures of every demo for the demo index (/demos/): each demo's embed page at its defaults,
// caption hidden, light theme, taken in headless Chromium from the built site and written to
// dist/thumbs/<id>.jpg. Run by scripts/build.sh after the static pages are written (the demo
// ids are read from dist/demos/index.html, which lists every demo of the registry).
// Usage: node scripts/thumbs.mjs [dist]
import fs from "node:fs";
import path from "node:path";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch } from "../tests/browser/browser.mjs";

const dist = path.resolve(process.argv[2] || "dist");
const listing = fs.readFileSync(path.join(dist, "demos/index.html"), "utf8");
const ids = [...new Set([...listing.matchAll(/href="\/embed\/\?demo=([a-z0-9-]+)"/g)].map((m) => m[1]))];
if (ids.length === 0) throw new Error("no demos listed in dist/demos/index.html");
const out = path.join(dist, "thumbs");
fs.mkdirSync(out, { recursive: true });

const started = Date.now();
const { server, url } = await startServer(dist);
const browser = await launch();
const failed = [];
async function shoot(id) {
  const context = await browser.newContext({
    viewport: { width: 720, height: 450 }, colorScheme: "light", serviceWorkers: "block",
  });
  const page = await context.newPage();
  try {
    await page.goto(`${url}/embed/?demo=${id}&caption=0`);
    // A demo is drawn once its canvases have a size; some (GPT-2) load a model first.
    await page.waitForFunction(() => {
      const cs = [...document.querySelectorAll(".demo canvas")];
      return cs.length > 0 && cs.some((c) => c.width > 0 && c.height > 0);
    }, null, { timeout: 15000 }).catch(() => {});
    await page.waitForTimeout(600);
    await page.screenshot({ path: path.join(out, `${id}.jpg`), type: "jpeg", quality: 72 });
  } catch (e) {
    failed.push(`${id}: ${e.message.split("\n")[0]}`);
  } finally {
    await context.close();
  }
}
// Two at a time: the build machine has few cores.
const queue = [...ids];
await Promise.all([0, 1].map(async () => { while (queue.length) await shoot(queue.shift()); }));
await browser.close();
server.close();
const bytes = fs.readdirSync(out).reduce((s, f) => s + fs.statSync(path.join(out, f)).size, 0);
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`[build] demo thumbnails: ${ids.length - failed.length} of ${ids.length}, ${Math.round(bytes / 1024)} KiB, ${seconds} s`);
if (failed.length) {
  console.log(`[build] no thumbnail for: ${failed.join("; ")}`);
  process.exitCode = 1;
}
