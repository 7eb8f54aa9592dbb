// Peak memory of the benchmarks' own Chromium (bench/gpt2.mjs, bench/onnx.mjs).
import fs from "node:fs";

// The largest VmHWM among the renderer processes of the Chromium this script started (its
// descendants: other Chromiums on the machine, a test run beside the benchmark, do not count).
// A dedicated worker runs inside its page's renderer, so this is the page and its worker.
export function rendererPeakMb() {
  const parent = (pid) => Number(fs.readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[1]);
  const ours = (pid) => {
    for (let p = pid; p > 1; p = parent(p)) if (p === process.pid) return true;
    return false;
  };
  let best = 0;
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("chromium") || !cmd.includes("--type=renderer") || !ours(Number(pid))) continue;
      const hwm = /VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
      if (hwm) best = Math.max(best, Number(hwm[1]) / 1024);
    } catch { /* the process ended */ }
  }
  return Math.round(best);
}
