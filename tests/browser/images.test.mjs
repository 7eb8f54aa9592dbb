// "Attention on images" in the real page: the bundled Vision Transformer, loaded by the worker,
// names the page's drawn star as the native session does (tests/book/real_model_demos.rs), draws
// its maps, takes the reader's drawing and picture files, refuses what is not a picture, reports
// knock-outs beside the prediction without them, and a link restores the state.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { newPage, settledUrl, serveBook, closeBook, setValue, downloadJson } from "./browser.mjs";

let server, base, browser;
before(async () => ({ server, base, browser } = await serveBook()));
after(() => closeBook({ server, browser }));

const vision = (page, key) => page.$eval("#vision .vision", (e, k) => e.dataset[k], key);
const answered = (page, label, after = 0) => page.waitForFunction(
  ([l, a]) => {
    const e = document.querySelector("#vision .vision");
    return e?.dataset.label === l && Number(e.dataset.id) > a;
  }, [label, after], { timeout: 60000 });

// A picture file the page has never seen: a filled disc on paper, `w` × `h`, as PNG bytes.
async function discPng(page, w, h) {
  const bytes = await page.evaluate(async ([w, h]) => {
    const c = new OffscreenCanvas(w, h);
    const g = c.getContext("2d");
    g.fillStyle = "#f4f0e6"; g.fillRect(0, 0, w, h);
    g.fillStyle = "#202030"; g.beginPath(); g.arc(w / 2, h / 2, Math.min(w, h) * 0.33, 0, 2 * Math.PI); g.fill();
    const blob = await c.convertToBlob({ type: "image/png" });
    return [...new Uint8Array(await blob.arrayBuffer())];
  }, [w, h]);
  return Buffer.from(bytes);
}

test("the bundled ViT names drawn shapes, the reader's drawing and file, and draws its maps", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/images/`);
  await answered(page, "star");
  assert.ok(Number(await vision(page, "prob")) > 0.999);
  assert.match(await page.$eval("#vision .readout", (e) => e.textContent),
    /Six drawn shapes: ViT with 4 layers of 4 heads, 0\.14 M parameters; 32 × 32 pixels in patches of 4 \(8 × 8 patches/);
  const data = await downloadJson(page, "vision");
  assert.equal(data.outputs.computed.top[0].label, "star");
  assert.equal(data.outputs.computed.maps[0].strongest, 29, "as the native session computes it");
  assert.equal(await page.$eval("#vision figcaption", (e) => e.textContent),
    "From patch 27 (row 3, column 3), layer 3, mean of the heads");
  // A click on the map's top-left corner picks patch 0.
  await page.click("#vision .image-map canvas", { position: { x: 3, y: 3 } });
  await page.waitForFunction(() => /^From patch 0 /.test(document.querySelector("#vision figcaption")?.textContent));
  // Head by head: one map per head and their mean.
  await page.selectOption("#vision-show", "heads");
  await page.waitForFunction(() => document.querySelectorAll("#vision .image-map").length === 5);
  // The reader draws a line on the pad.
  let id = Number(await vision(page, "id"));
  await page.$eval("#vision .draw-pad canvas", (e) => e.scrollIntoView({ block: "center" }));
  const pad = await (await page.$("#vision .draw-pad canvas")).boundingBox();
  await page.mouse.move(pad.x + 30, pad.y + pad.height - 30);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) {
    await page.mouse.move(pad.x + 30 + i * (pad.width - 60) / 10, pad.y + pad.height - 30 - i * (pad.height - 60) / 10);
  }
  await page.mouse.up();
  await answered(page, "line", id);
  assert.equal(await page.$eval("#vision-picture", (e) => e.value), "yours");
  // A picture file, wider than tall: resized to 32 × 32 as the image processor does.
  id = Number(await vision(page, "id"));
  const input = await page.$("#vision input[type=file]:not([capture])");
  await input.setInputFiles({ name: "disc.png", mimeType: "image/png", buffer: await discPng(page, 300, 200) });
  await answered(page, "circle", id);
  // What is not a picture is refused with the reason, and the prediction stays.
  await input.setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("a circle") });
  await page.waitForSelector("#vision .notice");
  assert.match(await page.$eval("#vision .notice", (e) => e.textContent), /“notes\.txt” is a file of type text\/plain, not a picture/);
  await input.setInputFiles({ name: "broken.png", mimeType: "image/png", buffer: Buffer.from([137, 80, 78, 71, 1, 2, 3]) });
  await page.waitForFunction(() => /could not be read as a picture/.test(document.querySelector("#vision .notice")?.textContent));
  assert.equal(await vision(page, "label"), "circle");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("knock-outs are reported beside the prediction without them, bad ones refused, and a link restores it", async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/images/?vision.picture=circle`);
  await answered(page, "circle");
  const id = Number(await vision(page, "id"));
  await setValue(page, "#vision-knock-out", "1.0 1.1 1.2 1.3 2.0 2.1 2.2 2.3 3.0 3.1 3.2 3.3");
  await answered(page, "square", id);
  assert.match(await page.$eval("#vision table.prediction", (e) => e.textContent), /without the knock-outs/);
  const data = await downloadJson(page, "vision");
  assert.equal(data.outputs.computed.unablated[0].label, "square");
  assert.ok(data.outputs.computed.unablated[0].prob < 0.001, "without the knock-outs, hardly a square");
  await setValue(page, "#vision-knock-out", "4.0");
  await page.waitForSelector("#vision .notice");
  assert.match(await page.$eval("#vision .notice", (e) => e.textContent), /“4\.0” is not a head of this model: it has layers 0 to 3/);
  await setValue(page, "#vision-knock-out", "3.0");
  await page.selectOption("#vision-show", "positions");
  await page.waitForFunction(() => document.querySelectorAll("#vision .image-map").length === 2);
  const fresh = await newPage(browser, { viewport: { width: 390, height: 844 } });
  await fresh.goto(await settledUrl(page));
  await fresh.waitForFunction(() => document.querySelectorAll("#vision .image-map").length === 2, null, { timeout: 60000 });
  assert.equal(await fresh.$eval("#vision-picture", (e) => e.value), "circle");
  assert.equal(await fresh.$eval("#vision-knock-out", (e) => e.value), "3.0");
  assert.deepEqual([...page.errors, ...fresh.errors], []);
  await page.context().close(); await fresh.context().close();
});
