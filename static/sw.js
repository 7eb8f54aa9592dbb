// The book's service worker: after the first visit the whole site answers from this browser's
// Cache Storage, so every chapter, embed and bundled model works with no network.
//
// - The build (examples/site_pages.rs, src/chapters/offline.rs) writes the list of the site's
//   files and a version (a hash of them all) into the slot below. A new deployment is therefore
//   a changed sw.js, which the browser notices on the next visit: the new worker installs its
//   own cache beside the old one and waits; the page offers a reload (static/offline.js), and
//   only then does it take over. Files of two versions are never mixed: each worker answers
//   from its own version's cache only.
// - Reader-downloaded models live in another cache ("attention-live-models", src/worker/fetch.rs),
//   which this worker never touches; it answers only requests to the site itself.
// - Without the list (Trunk's development server, before the build fills it in) it does nothing.
const BUILD = /*build*/ null /*/build*/;
const PREFIX = "attention-live-shell-";
const CACHE = PREFIX + (BUILD ? BUILD.version : "none");

self.addEventListener("install", (event) => {
  if (!BUILD) return;
  // The page's code (page-<hash>/: the main wasm and a chunk per chapter, scripts/build_page.sh)
  // never changes under its name: where the browser can, it answers it from this version's cache
  // without waking this worker, which costs a few milliseconds a file.
  // Anything not in the cache falls through to the network, as below.
  if (event.addRoutes && typeof URLPattern === "function") {
    const pathname = new URL("./", self.location).pathname + "page-*";
    event.addRoutes({ condition: { urlPattern: new URLPattern({ pathname }) }, source: { cacheName: CACHE } })
      .catch(() => { /* an older browser: the fetch handler answers */ });
  }
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // "reload": past the HTTP cache, so that a file whose name has no hash (the worker's loader)
    // comes as deployed now, not as a previous visit left it.
    await cache.addAll(BUILD.files.map((f) => new Request(new URL(f, self.location), { cache: "reload" })));
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
    }
    // The first visit's page becomes controlled at once (it is of this version).
    await self.clients.claim();
  })());
});

// The page's "Reload" button (static/offline.js): the waiting version takes over.
self.addEventListener("message", (event) => {
  if (event.data && event.data.type === "activate-update") self.skipWaiting();
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (!BUILD || request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return; // model hubs and readers' URLs: the network, as always
  event.respondWith(answer(request, url).then(isolated));
});

// Cross-origin isolation, which shared memory (the compute worker's threads) needs: a static host
// sends no such headers, so this worker adds them to the site's own answers. Opener policy
// "same-origin" keeps other sites' windows out of the page's process; embedder policy
// "require-corp" admits only resources that consent (the site's own, and the model hubs' CORS
// downloads); resource policy "cross-origin" lets other sites keep embedding the book's pages.
// The first visit is not isolated (this worker does not control it yet) and runs one thread.
const ISOLATION = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
  "Cross-Origin-Resource-Policy": "cross-origin",
};

function isolated(response) {
  // Redirects and opaque answers are passed on as they are.
  if (!response || response.status < 200 || response.status > 299 || response.type === "opaque") return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

const ROOT = new URL("./", self.location);

/// A cached file, or the network for anything the build did not list (never stored here).
async function answer(request, url) {
  const cache = await caches.open(CACHE);
  if (request.mode === "navigate") {
    // A route is its folder's index.html (the build writes one per route); "/masking" goes to
    // "/masking/" as a static host would redirect it.
    if (url.pathname.endsWith("/")) {
      const page = await cache.match(new URL("index.html", url));
      if (page) return page;
    } else if (!/\.[A-Za-z0-9]+$/.test(url.pathname) && (await cache.match(url.href + "/index.html"))) {
      return Response.redirect(url.pathname + "/" + url.search, 301);
    }
  }
  const hit = await cache.match(url.origin + url.pathname);
  if (hit) return hit;
  try {
    return await fetch(request);
  } catch (e) {
    // No network and no such page: the site's own "not found" page, which lists every chapter.
    if (request.mode === "navigate") {
      const missing = await cache.match(new URL("404.html", ROOT));
      if (missing) return missing;
    }
    throw e;
  }
}
