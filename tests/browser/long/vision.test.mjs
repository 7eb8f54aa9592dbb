// DeiT-tiny's shape in "Attention on images": a random-init ViT checkpoint of
// facebook/deit-tiny-patch16-224's configuration (written here, never committed, about 23 MB)
// with its image processor's settings, served from another 127.0.0.1 port as the folder of
// "DeiT-tiny". The page asks before downloading, shows the progress, loads the three files,
// classifies the drawn star and draws maps over 14 × 14 patches; a link in another tab reads the
// kept copy without asking.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { startServer } from "../static-server.mjs";
import { launchPersistent, settledUrl, serveBook, closeBook, recordErrors, downloadJson } from "../browser.mjs";

const models = "/tmp/attention-live-test-vit";
const folder = `${models}/random-deit-tiny`;
let server, base, hub, browser;
const requests = [];

// DeiT-tiny's config.json and preprocessor_config.json, as the hub has them (labels numbered).
const config = {
  architectures: ["ViTForImageClassification"], model_type: "vit", hidden_size: 192, num_hidden_layers: 12,
  num_attention_heads: 3, intermediate_size: 768, hidden_act: "gelu", image_size: 224, patch_size: 16,
  num_channels: 3, layer_norm_eps: 1e-12, qkv_bias: true,
  id2label: Object.fromEntries([...Array(1000).keys()].map((i) => [String(i), `class ${i}`])),
};
const preprocessor = {
  do_resize: true, size: 256, resample: 3, do_center_crop: true, crop_size: 224, do_normalize: true,
  image_mean: [0.485, 0.456, 0.406], image_std: [0.229, 0.224, 0.225], feature_extractor_type: "DeiTFeatureExtractor",
};

// The checkpoint's tensors under their names, random (a fixed-seed generator): weights about
// N(0, 0.02), norms' scales about 1.
function writeCheckpoint(dir) {
  const c = 192, f = 768, n = 197;
  const shapes = [
    ["vit.embeddings.patch_embeddings.projection.weight", [c, 3, 16, 16]],
    ["vit.embeddings.patch_embeddings.projection.bias", [c]],
    ["vit.embeddings.cls_token", [1, 1, c]], ["vit.embeddings.position_embeddings", [1, n, c]],
    ["vit.layernorm.weight", [c]], ["vit.layernorm.bias", [c]],
    ["classifier.weight", [1000, c]], ["classifier.bias", [1000]],
  ];
  for (let l = 0; l < 12; l++) {
    const p = `vit.encoder.layer.${l}`;
    for (const [name, out, inp] of [["attention.attention.query", c, c], ["attention.attention.key", c, c],
      ["attention.attention.value", c, c], ["attention.output.dense", c, c], ["intermediate.dense", f, c],
      ["output.dense", c, f]]) {
      shapes.push([`${p}.${name}.weight`, [out, inp]], [`${p}.${name}.bias`, [out]]);
    }
    for (const norm of ["layernorm_before", "layernorm_after"]) {
      shapes.push([`${p}.${norm}.weight`, [c]], [`${p}.${norm}.bias`, [c]]);
    }
  }
  let seed = 1234567;
  const uniform = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
  const header = {};
  let offset = 0;
  const datas = shapes.map(([name, shape]) => {
    const len = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(len);
    const norm = /layernorm(_before|_after)?\.weight$/.test(name);
    for (let i = 0; i < len; i++) data[i] = norm ? 1 + 0.1 * uniform() : 0.07 * uniform();
    header[name] = { dtype: "F32", shape, data_offsets: [offset, offset + 4 * len] };
    offset += 4 * len;
    return Buffer.from(data.buffer);
  });
  let text = JSON.stringify(header);
  text += " ".repeat((8 - (text.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(text.length));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(`${dir}/model.safetensors`, Buffer.concat([len, Buffer.from(text), ...datas]));
  fs.writeFileSync(`${dir}/config.json`, JSON.stringify(config, null, 2));
  fs.writeFileSync(`${dir}/preprocessor_config.json`, JSON.stringify(preprocessor, null, 2));
}

before(async () => {
  if (!fs.existsSync(`${folder}/preprocessor_config.json`)) writeCheckpoint(folder);
  ({ server, base, browser } = await serveBook());
  hub = await startServer(models, 0, { cors: true, onRequest: (p) => requests.push(p) });
});
after(async () => { await closeBook({ server, browser }); hub?.server.close(); });

const until = (page, s, timeout = 120000) => page.waitForFunction(
  (want) => document.querySelector("#vision .vision-status")?.dataset.status === want, s, { timeout });

test("DeiT-tiny's shape from a folder: asked first, downloaded with progress, classified and drawn, kept", async () => {
  const profile = fs.mkdtempSync("/tmp/attention-live-vit-profile-");
  const ctx = await launchPersistent(profile, { viewport: { width: 1280, height: 900 } });
  const page = ctx.pages()[0] ?? await ctx.newPage();
  recordErrors(page);
  const at = encodeURIComponent(`${hub.url}/random-deit-tiny/`);
  await page.goto(`${base}/images/?vision.model=deit-tiny&vision.base=${at}&vision.backend=cpu`);
  await until(page, "waiting", 60000);
  assert.match(await page.$eval("#vision .vision-status", (e) => e.textContent), /DeiT-tiny is not in this browser's storage yet/);
  assert.ok(!requests.some((p) => p.endsWith(".safetensors")), "nothing is downloaded before the reader asks");
  await page.click("#vision button.download");
  await page.waitForSelector("#vision .vision-status progress", { timeout: 60000 });
  await until(page, "ready");
  assert.match(await page.$eval("#vision .vision-status", (e) => e.textContent),
    /DeiT-tiny \(downloaded and kept in this browser for next time\): ViT with 12 layers of 3 heads, 5\.72 M parameters; 224 × 224 pixels in patches of 16 \(14 × 14 patches/);
  for (const f of ["config.json", "model.safetensors", "preprocessor_config.json"]) {
    assert.ok(requests.includes(`/random-deit-tiny/${f}`), f);
  }
  await page.waitForFunction(() => /^class \d+$/.test(document.querySelector("#vision .vision")?.dataset.label ?? ""),
    null, { timeout: 120000 });
  const data = await downloadJson(page, "vision");
  const { top, maps, grid } = data.outputs.computed;
  assert.equal(grid, 14);
  assert.equal(top.length, 5);
  top.forEach((t, i) => assert.ok(i === 0 || t.prob <= top[i - 1].prob));
  assert.equal(maps[0].values.length, 196);
  // The class token's rollout row and a patch's weights each sum to at most 1 over the patches.
  assert.ok(maps[0].values.reduce((a, b) => a + b, 0) <= 1 + 1e-5);
  // A link in another tab of this browser: read from its storage, nothing downloaded again.
  const downloads = requests.filter((p) => p.endsWith(".safetensors")).length;
  const again = await ctx.newPage();
  recordErrors(again, false);
  await again.goto(await settledUrl(page));
  await until(again, "ready");
  assert.match(await again.$eval("#vision .vision-status", (e) => e.textContent), /read from this browser's storage/);
  assert.equal(requests.filter((p) => p.endsWith(".safetensors")).length, downloads);
  assert.deepEqual([...page.errors, ...again.errors], []);
  await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
});
