"""The preview server of `build --watch --serve`: the site read-only on 127.0.0.1, reloaded after each build."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import livereload  # imported for real only when a server starts

LOOPBACK = "127.0.0.1"


def port_problem(port: int, exc: Exception) -> str:
    import errno

    if isinstance(exc, OverflowError):
        return f"port {port} is not a TCP port (1 to 65535); try --port"
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        return f"port {port} is in use; try --port"
    return f"cannot listen on {LOOPBACK}:{port} ({getattr(exc, 'strerror', None) or exc}); try --port"


def local_server(sockets: list, port: int, app: Callable) -> livereload.Server:
    """Return a livereload server on these sockets that answers only requests addressed to it by name.

    A web page of another site can make a browser send requests to 127.0.0.1 (DNS rebinding: its
    name now resolves here), but the browser then names that site in `Host` and `Origin`: such
    requests are refused, so no other site can read these pages or listen for their reloads.
    """
    from urllib.parse import urlsplit

    from livereload import Server
    from livereload.handlers import LiveReloadHandler, LiveReloadJSHandler
    from tornado import web
    from tornado.httpserver import HTTPServer
    from tornado.httputil import HTTPServerRequest

    hosts = {f"{LOOPBACK}:{port}", f"localhost:{port}"} | ({LOOPBACK, "localhost"} if port == 80 else set())
    # livereload injects an inline loader script, which the pages' Content-Security-Policy
    # (scripts only from the site's own origin) rightly blocks: load its client by src instead.
    script = f'<script src="/livereload.js?port={port}"></script>'.encode()

    class LocalReloadHandler(LiveReloadHandler):
        def check_origin(self, origin: str) -> bool:
            return urlsplit(origin).netloc.lower() in hosts

    class LocalApplication(web.Application):
        def find_handler(self, request: HTTPServerRequest, **kwargs: Any) -> Any:
            if request.headers.get("Host", "").lower() not in hosts:
                return self.get_handler_delegate(request, web.ErrorHandler, {"status_code": 400})
            return super().find_handler(request, **kwargs)

    class LocalServer(Server):
        def _setup_logging(self) -> None:
            # livereload's own sets its logger to INFO with a handler of its own: "Serving on",
            # "Start watching changes", then "Browser Connected: <page>" for each page opened and
            # "Reload 1 waiters: <the stamp in the cache folder>" at every build, even with -q. A
            # watch prints only changes and trouble: its warnings and errors still reach stderr.
            logging.getLogger("livereload").setLevel(logging.WARNING)

        def application(self, port: int, host: str, liveport: int | None = None, debug: bool | None = None, live_css: bool = True) -> None:
            LiveReloadHandler.watcher, LiveReloadHandler.live_css = self.watcher, live_css
            # livereload drops a change seen within 3 s of the last reload ("too many files at
            # once"), and the change is then lost: a build finishing soon after another was never
            # shown. The stamp changes once per completed build, and builds are paced already.
            LiveReloadHandler.DEFAULT_RELOAD_TIME = 0
            handlers: list[Any] = [(r"/livereload", LocalReloadHandler), (r"/livereload.js", LiveReloadJSHandler),
                        (r".*", web.FallbackHandler, {"fallback": _tornado_answer(app, script)})]
            # Not debug mode (it sends tracebacks to the browser and restarts on code changes), and
            # no access log: a watch prints only changes and trouble.
            HTTPServer(LocalApplication(handlers, log_function=lambda handler: None)).add_sockets(sockets)

    return LocalServer(app=app)


def _tornado_answer(app: Callable, script: bytes) -> Callable:
    """Return a tornado fallback answering with the WSGI app: livereload's client added to pages, HEAD without a body."""
    from tornado.httputil import HTTPHeaders, HTTPServerRequest, ResponseStartLine
    from tornado.wsgi import WSGIContainer

    environ = WSGIContainer(app).environ

    def answer(request: HTTPServerRequest) -> None:
        started: list = []
        body = b"".join(app(environ(request), lambda status, headers, exc_info=None: started.extend((status, headers))))
        status, headers = started
        code, reason = status.split(" ", 1)
        fields = HTTPHeaders()
        for name, value in headers:
            fields.add(name, value)
        if fields.get("Content-Type", "").startswith("text/html"):
            body = body.replace(b"</head>", script + b"</head>", 1)
        fields["Content-Length"] = str(len(body))  # HEAD too: the length GET would send
        connection = request.connection
        assert connection is not None  # a request tornado hands over always has its connection
        connection.write_headers(ResponseStartLine("HTTP/1.1", int(code), reason), fields, chunk=b"" if request.method == "HEAD" else body)
        connection.finish()

    return answer


CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png"}


def site_app(root: Path) -> Callable:
    """Return a WSGI app serving the site read-only, each file read whole through one descriptor.

    A file is read in one go from one open descriptor, so a page replaced mid-request (pages
    are replaced atomically) is served whole, old or new, never a mix. Only files inside the
    output folder are served, none under or named with a dot (a `.git`, the marker file, staged
    `.tmp-*` files); a path that cannot name a page is a 400 or a 404, never an exception. HEAD
    gets GET's answer, and the server drops its body.
    """
    base = os.path.realpath(root)

    def app(environ: dict, start_response: Callable) -> list[bytes]:
        if environ.get("REQUEST_METHOD", "GET") not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Content-Type", "text/plain"), ("Allow", "GET, HEAD")])
            return [b"read only\n"]
        target = _site_file(base, environ.get("PATH_INFO", "/"))
        body = None
        if isinstance(target, str):
            try:
                with open(target, "rb") as handle:
                    body = handle.read()
            except OSError:
                pass
        if body is None:
            bad = target is BAD_PATH
            start_response("400 Bad Request" if bad else "404 Not Found", [("Content-Type", "text/plain")])
            return [b"bad request\n" if bad else b"not found\n"]
        assert isinstance(target, str)  # a body was read, so the path was good
        content_type = CONTENT_TYPES.get(os.path.splitext(target)[1], "application/octet-stream")
        start_response("200 OK", [("Content-Type", content_type), ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")])
        return [body]

    return app


BAD_PATH = object()  # a request no page could answer: 400
MAX_URL_PATH = 1024  # characters; the longest page path of a site is far shorter


def _site_file(base: str, path_info: str) -> str | object | None:
    """Return the file a URL path names inside `base`, None when there is none (404), or BAD_PATH (400)."""
    try:
        path = path_info.encode("latin-1").decode("utf-8")  # WSGI gives the URL's bytes as latin-1
    except UnicodeError:
        return None  # not UTF-8 (overlong forms included): no page has such a name
    if len(path) > MAX_URL_PATH or any(char < " " or char == "\x7f" for char in path):
        return BAD_PATH  # NUL and other control characters, or a path no page comes near
    parts = [part for part in path.split("/") if part]
    if any(part.startswith(".") for part in parts):
        return None  # "..", a dot-folder or a dot-file
    target = os.path.realpath(os.path.join(base, *parts))
    if os.path.isdir(target):
        target = os.path.join(target, "index.html")
    if os.path.commonpath([target, base]) != base:
        return None
    if any(part.startswith(".") for part in os.path.relpath(target, base).split(os.sep)):
        return None  # a link inside the site that leads into a dot-folder
    return target
