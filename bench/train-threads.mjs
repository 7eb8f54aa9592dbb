// Where the training lab's threads spend their time, in headless Chromium on this machine: the
// lab trains the benchmark configuration of bench/train.mjs on one thread (the page not
// isolated) and on every core (isolated); for 5 s of each, prints steps per second, the CPU time
// of every busy thread of Chromium's processes (from /proc: Linux only; the compute worker and
// the pool's threads are "DedicatedWorker") and each worker's CPU profile, by function, its own
// time (Chromium's sampling profiler through the DevTools protocol).
// Run: node bench/train-threads.mjs [DIST]   (after scripts/build.sh). Function names need a
// threaded build that keeps them: `NAMES=1 scripts/build_threads.sh DIST` then
// `cargo run --example site_pages -- DIST` (a copy of dist/); without them a profile shows
// wasm-function[i]. TOP=N lines per profile (default 12). Measurements, not pass/fail tests.
import fs from "node:fs";
import { startServer } from "../tests/browser/static-server.mjs";
import { launch, newPage } from "../tests/browser/browser.mjs";

const dist = process.argv[2] || new URL("../dist", import.meta.url).pathname;
const TOP = Number(process.env.TOP || 12);
const q = "task=copy&n=16&layers=2&heads=4&width=64&mlp=true&pos=learned&lr=0.001&batch=32&steps=2000";
const browser = await launch();

// CPU seconds of every thread of Chromium's processes, by "process type:thread name".
function cpu() {
  const out = {};
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("chrom")) continue;
      const type = (cmd.match(/--type=([a-z-]+)/) || [, "browser"])[1];
      for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        const st = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
        out[`${pid}/${tid}`] = { name: `${type}: ${st.slice(st.indexOf("(") + 1, st.lastIndexOf(")"))}`, s: (+f[11] + +f[12]) / 100 };
      }
    } catch {}
  }
  return out;
}

// The DevTools protocol of each worker target, through the browser's session.
async function workerSessions(cdp) {
  const { targetInfos } = await cdp.send("Target.getTargets");
  let next = 1;
  const pending = new Map();
  cdp.on("Target.receivedMessageFromTarget", (e) => {
    const m = JSON.parse(e.message);
    pending.get(m.id)?.(m);
    pending.delete(m.id);
  });
  const sessions = [];
  for (const t of targetInfos.filter((t) => t.type === "worker")) {
    const { sessionId } = await cdp.send("Target.attachToTarget", { targetId: t.targetId, flatten: false });
    const send = (method, params = {}) => new Promise((res) => {
      const id = next++;
      pending.set(id, res);
      cdp.send("Target.sendMessageToTarget", { sessionId, message: JSON.stringify({ id, method, params }) });
    });
    sessions.push({ url: t.url, send });
  }
  return sessions;
}

function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame.functionName || "(anonymous)"]));
  const self = {};
  for (const s of profile.samples) self[byId.get(s)] = (self[byId.get(s)] || 0) + 1;
  return Object.entries(self).sort((a, b) => b[1] - a[1]).map(([f, n]) => [f, n / profile.samples.length]);
}

for (const isolated of [false, true]) {
  const { server, url } = await startServer(dist, 0, { isolated });
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${url}/training/?${q.split("&").map((kv) => "train-lab." + kv).join("&")}`);
  await page.waitForSelector(".train-main");
  await page.click(".train-main");
  const step = () => page.$eval(".train-status", (e) => +e.dataset.step);
  while ((await step()) < 30) await page.waitForTimeout(50);

  // First the threads' CPU time alone (a profiler slows what it watches), then the profiles.
  const [a, s0, t0] = [cpu(), await step(), performance.now()];
  await new Promise((r) => setTimeout(r, 5000));
  const [b, s1, t1] = [cpu(), await step(), performance.now()];
  const secs = (t1 - t0) / 1e3;
  console.log(`\n${isolated ? "isolated (every core)" : "not isolated (one thread)"}: ${((s1 - s0) / secs).toFixed(1)} steps/s`);
  const busy = Object.entries(b).map(([k, v]) => [v.name, (v.s - (a[k]?.s ?? 0)) / secs]).filter(([, c]) => c >= 0.02);
  for (const [name, c] of busy.sort((x, y) => y[1] - x[1])) console.log(`  ${name.padEnd(34)} ${(100 * c).toFixed(0)}% of a core`);

  const cdp = await browser.newBrowserCDPSession();
  const workers = await workerSessions(cdp);
  for (const w of workers) {
    await w.send("Profiler.enable");
    await w.send("Profiler.setSamplingInterval", { interval: 250 });
    await w.send("Profiler.start");
  }
  await new Promise((r) => setTimeout(r, 5000));
  for (const w of workers) {
    const { result } = await w.send("Profiler.stop");
    // The compute worker runs its loader's script; each pool thread a script from a blob.
    const kind = w.url.startsWith("blob:") ? "pool thread" : "compute worker";
    console.log(`  ${kind} (${result.profile.samples.length} samples), own time:`);
    for (const [f, share] of selfTimes(result.profile).slice(0, TOP)) {
      console.log(`    ${(100 * share).toFixed(1).padStart(5)}%  ${f.replace(/\[[0-9a-f]{16}\]/g, "").slice(0, 100)}`);
    }
  }
  await cdp.detach();
  await page.close();
  server.close();
}
await browser.close();
