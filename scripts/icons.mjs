// Draws the book's icon (static/icons/): an SVG, and the PNGs that the web app manifest and
// Apple's home screen need, rendered from it by Chromium. `node scripts/icons.mjs`; the
// results are committed, so a build needs no browser.
//
// The picture: a row of tokens and the attention from the last one to the others, the book's
// subject in one glance. The maskable variant fills the square and keeps the picture inside
// the central 80 % that every platform's mask leaves visible.
import fs from "node:fs";
import { launch } from "../tests/browser/browser.mjs";

const OUT = new URL("../static/icons/", import.meta.url).pathname;
const BLUE = "#2563eb";

/// The picture in a 100 × 100 box; `full` fills the square (maskable, Apple), else a rounded tile.
function svg({ full = false } = {}) {
  const scale = full ? 0.78 : 1; // the maskable safe zone
  const shift = (100 - 100 * scale) / 2;
  const tokens = [22, 40, 58, 76];
  const q = { x: 76, y: 70 }; // the query token, bottom right
  const weights = [0.95, 0.35, 0.6, 0.2];
  const arcs = tokens.map((x, i) =>
    `<path d="M${q.x} ${q.y - 6} C ${q.x} 40, ${x} 40, ${x} 34" fill="none" stroke="#fff" `
    + `stroke-width="${(1.5 + 4.5 * weights[i]).toFixed(1)}" stroke-linecap="round" `
    + `opacity="${(0.35 + 0.65 * weights[i]).toFixed(2)}"/>`
  ).join("");
  const dots = tokens.map((x) => `<circle cx="${x}" cy="28" r="6" fill="#fff"/>`).join("")
    + `<circle cx="${q.x}" cy="${q.y}" r="7" fill="#fde047"/>`;
  const tile = full
    ? `<rect width="100" height="100" fill="${BLUE}"/>`
    : `<rect width="100" height="100" rx="22" fill="${BLUE}"/>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">${tile}`
    + `<g transform="translate(${shift} ${shift}) scale(${scale})">${arcs}${dots}</g></svg>\n`;
}

fs.mkdirSync(OUT, { recursive: true });
fs.writeFileSync(OUT + "icon.svg", svg());
const browser = await launch();
const page = await browser.newPage();
for (const [file, size, full] of [
  ["icon-192.png", 192, false], ["icon-512.png", 512, false],
  ["maskable-512.png", 512, true], ["apple-touch-icon.png", 180, true],
]) {
  await page.setViewportSize({ width: size, height: size });
  const data = Buffer.from(svg({ full })).toString("base64");
  await page.setContent(`<style>html,body{margin:0;background:transparent}</style>`
    + `<img src="data:image/svg+xml;base64,${data}" width="${size}" height="${size}" style="display:block">`);
  await page.waitForFunction(() => document.images[0].complete);
  await page.screenshot({ path: OUT + file, omitBackground: true });
  console.log(`${file}: ${size}×${size}, ${fs.statSync(OUT + file).size} bytes`);
}
await browser.close();
