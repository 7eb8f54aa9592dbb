// Offline reading, on the page's side (plain script, loaded by every page before the app):
// registers the service worker (sw.js, beside this file at the site's root), offers a new
// version once one has installed ("A new version is available — Reload"), and says when the
// network is gone. Where service workers are unavailable (plain http on another host, a
// blocked or private profile) the book works online exactly as without it.
(function () {
  "use strict";
  const here = document.currentScript ? document.currentScript.src : location.href;

  /// A bar at the foot of the window (one per kind), or null to remove it.
  function bar(kind, text, button) {
    let el = document.getElementById(kind);
    if (!text) {
      if (el) el.remove();
      return;
    }
    if (!el) {
      el = document.createElement("div");
      el.id = kind;
      el.className = "site-bar " + kind;
      el.setAttribute("role", "status");
      document.body.appendChild(el);
    }
    el.textContent = text;
    if (button) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = button.label;
      b.addEventListener("click", button.click);
      el.append(" ", b);
    }
  }

  function network() {
    bar("offline-notice", navigator.onLine ? null
      : "You are offline: the book works from this browser's copy; only model downloads need the network.",
      { label: "Hide", click: () => bar("offline-notice", null) });
  }

  function serviceWorker() {
    if (!("serviceWorker" in navigator)) return;
    const sw = navigator.serviceWorker;
    // An open page of the previous version reloads when the new one takes over (from this tab's
    // button or another's), so it never asks the new version for one of its own old files.
    const hadController = !!sw.controller;
    let reloading = false;
    sw.addEventListener("controllerchange", () => {
      if (hadController && !reloading) {
        reloading = true;
        location.reload();
      }
    });
    const offer = (worker) => {
      if (!sw.controller) return; // the first install: this page is already of its version
      bar("update-notice", "A new version is available —", {
        label: "Reload",
        click: () => worker.postMessage({ type: "activate-update" }),
      });
    };
    const url = new URL("sw.js", here);
    sw.register(url.href, { scope: new URL("./", url).pathname }).then((reg) => {
      if (!reg) return; // a registration stubbed out (browser tests with workers blocked)
      if (reg.waiting) offer(reg.waiting);
      reg.addEventListener("updatefound", () => {
        const worker = reg.installing;
        if (!worker) return;
        worker.addEventListener("statechange", () => {
          if (worker.state === "installed") offer(worker);
        });
      });
    }, () => { /* blocked or unsupported here: the book still works online */ });
  }

  function start() {
    network();
    addEventListener("online", network);
    addEventListener("offline", network);
    // After the page's own files have loaded: the worker's copy of the whole book (tens of MB)
    // must not compete with the first visit's wasm for the reader's bandwidth.
    if (document.readyState === "complete") serviceWorker();
    else addEventListener("load", serviceWorker, { once: true });
  }
  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
