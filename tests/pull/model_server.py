"""A small HTTP server on 127.0.0.1 for the `hearth pull` tests: it serves files from a
table of routes and honours Range requests (206 with Content-Range), so resuming is
exercised for real. A route can also cut the connection half way (once), stall after the
headers, ignore ranges, redirect, publish a hash header, or answer 404.
Stdlib only; runs in a thread of the test process."""
import http.server
import threading
import time


class Route:
    def __init__(self, body=b"", *, cut_once_at=None, stall=False, ignore_range=False,
                 redirect=None, headers=None, status=200, content_type="application/octet-stream"):
        self.body = body
        self.cut_once_at = cut_once_at   # send the headers of the whole file, then only this many bytes, then close
        self.stall = stall               # send the headers and a few bytes, then nothing
        self.ignore_range = ignore_range
        self.redirect = redirect         # 302 to this path
        self.headers = headers or {}
        self.status = status
        self.content_type = content_type


class ModelServer:
    def __init__(self):
        self.routes = {}
        self.requests = []               # (path, Range header or None), in order
        self.stop_stalling = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append((self.path, self.headers.get("Range")))
                route = server.routes.get(self.path)
                if route is None or route.status == 404:
                    self.send_response(404)
                    self.send_header("Content-Length", "9")
                    self.end_headers()
                    self.wfile.write(b"not found")
                    return
                if route.redirect:
                    self.send_response(302)
                    self.send_header("Location", route.redirect)
                    for k, v in route.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body, start = route.body, 0
                rng = self.headers.get("Range")
                if rng and not route.ignore_range and rng.startswith("bytes="):
                    first, _, last = rng[6:].partition("-")
                    start = int(first)
                    end = int(last) + 1 if last else len(body)
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(body)}")
                    body = body[start:end]
                else:
                    self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Accept-Ranges", "bytes")
                for k, v in route.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                if route.stall:
                    self.wfile.write(body[:1000])
                    self.wfile.flush()
                    server.stop_stalling.wait(60)
                    self.close_connection = True
                    return
                if route.cut_once_at is not None:
                    cut, route.cut_once_at = route.cut_once_at, None
                    self.wfile.write(body[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                for i in range(0, len(body), 1 << 16):
                    self.wfile.write(body[i:i + (1 << 16)])

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.stop_stalling.set()
        self.httpd.shutdown()
        self.httpd.server_close()
