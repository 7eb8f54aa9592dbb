// The slider moves the browser benchmarks make (bench/latency.mjs, bench/frame-trace.mjs).
// Both functions run in the page: `installSliderMoves(page)` defines them there.

// `n` values for the range input `el`, bouncing across its whole range in strides of about a
// fiftieth of it, so that every move changes the value.
function sliderValues(el, n) {
  const [min, max] = [Number(el.min), Number(el.max)];
  const step = Number(el.step) > 0 ? Number(el.step) : (max - min) / 100;
  const steps = Math.round((max - min) / step);
  const stride = Math.max(1, Math.floor(steps / 50));
  const values = [];
  let pos = 0, dir = 1;
  for (let i = 0; i < n; i++) {
    pos += dir * stride;
    if (pos > steps) { pos = 2 * steps - pos; dir = -1; }
    if (pos < 0) { pos = -pos; dir = 1; }
    values.push(String(min + pos * step));
  }
  return values;
}

// One move at the start of a frame, as Chromium dispatches real pointer and key input: the
// value is set and `input` sent from a requestAnimationFrame callback. Leptos runs its effects
// as microtasks, so every plot has been drawn when the callback returns; the browser then does
// the frame's style, layout, paint and commit in the same task, and a message posted from the
// callback arrives once those are done (a MessageChannel, not setTimeout: nested timers are
// clamped to 4 ms). Resolves to { drawn, frame } in ms from the event: to the last canvas draw
// (null if nothing was drawn) and to that message.
function moveInFrame(el, value) {
  return new Promise((resolve) => requestAnimationFrame(() => {
    el.value = value;
    const before = window.__alPaints;
    const t0 = performance.now();
    el.dispatchEvent(new Event("input", { bubbles: true }));
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve({
      drawn: window.__alPaints > before ? window.__alLastPaint - t0 : null,
      frame: performance.now() - t0,
    });
    ch.port2.postMessage(0);
  }));
}

/// Defines `window.__alSliderValues` and `window.__alMoveInFrame` in the page.
export async function installSliderMoves(page) {
  await page.evaluate(`window.__alSliderValues = ${sliderValues}; window.__alMoveInFrame = ${moveInFrame};`);
}
