// A plain static file server over dist/, for the browser tests and benchmarks. It behaves
// like `python3 -m http.server` and most free static hosts: a directory serves its
// index.html, "/x" redirects to "/x/" when x is a directory, and anything else is a 404.
// There is deliberately NO single-page-app fallback.
import http from "node:http";
import https from "node:https";
import fs from "node:fs";
import path from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
  ".css": "text/css", ".json": "application/json", ".png": "image/png", ".svg": "image/svg+xml",
  ".woff2": "font/woff2", ".safetensors": "application/octet-stream", ".jpg": "image/jpeg",
  ".webmanifest": "application/manifest+json",
};

const ISOLATION = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };

/// `opts.cors`: allow any origin to read (a model host for the page on another port);
/// `opts.isolated`: send the cross-origin isolation headers, as a host configured for shared
/// memory would (the book's service worker adds the same ones: static/sw.js);
/// `opts.onRequest(path)`: called for every request (to count downloads);
/// `opts.respond(req, res, path)`: answers a request itself when it returns true, before any file
/// is looked for (a host that misbehaves on purpose: tests/browser/loader.test.mjs); a `root` of
/// null serves no files, only what `respond` answers (anything else is a 404);
/// `opts.tls`: `{ key, cert }` (PEM) to serve HTTPS (a host name mapped to 127.0.0.1).
export function startServer(root, port = 0, opts = {}) {
  const base = root === null ? null : path.resolve(root);
  const notFound = (res) => res.writeHead(404, { "Content-Type": "text/plain" }).end("404 not found");
  const handle = (req, res) => {
    const url = new URL(req.url, "http://x");
    opts.onRequest?.(url.pathname);
    if (opts.respond?.(req, res, url.pathname)) return;
    if (base === null) { notFound(res); return; }
    let p = path.normalize(path.join(base, decodeURIComponent(url.pathname)));
    if (!p.startsWith(base)) { res.writeHead(403).end(); return; }
    let st = fs.statSync(p, { throwIfNoEntry: false });
    if (st && st.isDirectory()) {
      if (!url.pathname.endsWith("/")) {
        res.writeHead(301, { Location: url.pathname + "/" + url.search }).end();
        return;
      }
      p = path.join(p, "index.html");
      st = fs.statSync(p, { throwIfNoEntry: false });
    }
    if (!st || !st.isFile()) { notFound(res); return; }
    res.writeHead(200, {
      "Content-Type": TYPES[path.extname(p)] || "application/octet-stream", "Content-Length": st.size,
      ...(opts.cors ? { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "Content-Length" } : {}),
      ...(opts.isolated ? ISOLATION : {}),
    });
    fs.createReadStream(p).pipe(res);
  };
  const server = opts.tls ? https.createServer(opts.tls, handle) : http.createServer(handle);
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => {
    resolve({ server, url: `${opts.tls ? "https" : "http"}://127.0.0.1:${server.address().port}` });
  }));
}
