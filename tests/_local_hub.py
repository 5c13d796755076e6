"""A Hugging Face Hub on 127.0.0.1 that serves recorded files the way the Hub does, storage redirects included.

The Hub answers `GET /<org>/<name>/resolve/<revision>/<path>` for a small file itself, and for a file stored in
its large-file storage (a checkpoint) with a 302 to a signed URL on its storage host (cas-bridge.xethub.hf.co),
which answers the bytes, byte ranges included. A range request follows that redirect with its Range header.
This server does the same for the files it is given: `lfs` names the paths it redirects; the storage URL is
`<storage>/xet-bridge-us/<sha256 of the file>?X-Amz-Expires=3600`, served by the same server (it tells the two
apart by the path, and notes the Host header each request came with, so a test can check which host the client
believed it was talking to). Errors as the Hub gives them: 404 with X-Error-Code EntryNotFound for a file that
is not there, 401 with RepoNotFound for a repository it does not hold, 404 with RevisionNotFound for a
revision it does not know. Every answer carries the CORS headers the Hub sends to a page of another origin.
HEAD answers carry what huggingface_hub reads from them (X-Repo-Commit, ETag, and for a stored file X-Linked-Etag
and X-Linked-Size).

Plain HTTP for CPython (huggingface_hub, pointed at it with HF_ENDPOINT), HTTPS with a certificate made for the
test by openssl for Chromium, which reaches it through --host-resolver-rules that map the Hub's two hosts to
127.0.0.1 (the test's browser context ignores the certificate's issuer). Nothing leaves the machine.
"""

from __future__ import annotations

import hashlib
import http.server
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

CORS = {"Access-Control-Allow-Origin": "*",
        "Access-Control-Expose-Headers": "X-Error-Code,X-Error-Message,Content-Range,Accept-Ranges,Content-Length,"
                                         "X-Repo-Commit,X-Linked-Etag,X-Linked-Size,ETag,Location"}
STORAGE_PATH = "/xet-bridge-us/"


@dataclass
class Seen:
    """One request the server answered: its method, Host header, path, Range header, Origin header and status."""

    method: str
    host: str
    path: str
    range: str | None
    origin: str | None
    status: int = 0


@dataclass
class LocalHub:
    """repos: {(repo, revision): {path: bytes}}; lfs: paths served through the storage redirect; storage: the
    storage host's origin as the redirect names it (for HTTP tests another name of this server, for the browser
    https://cas-bridge.xethub.hf.co)."""

    repos: dict[tuple[str, str], dict[str, bytes]]
    lfs: tuple[str, ...] = (".safetensors",)
    storage: str = ""
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self):
        self.blobs = {hashlib.sha256(data).hexdigest(): data for files in self.repos.values() for data in files.values()}
        self._server = None

    # ----------------------------------------------------------------------------------------------- serving
    def start(self, tls_dir: Path | None = None) -> int:
        """Serve on 127.0.0.1 (HTTPS with a fresh self-signed certificate written into `tls_dir`); the port."""
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                hub._answer(self, body=True)

            def do_HEAD(self):
                hub._answer(self, body=False)

            def log_message(self, *args):  # quiet: the test reads `seen`
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls_dir is not None:
            cert, key = tls_dir / "cert.pem", tls_dir / "key.pem"
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                            "/CN=huggingface.co", "-keyout", str(key), "-out", str(cert)],
                           check=True, capture_output=True, timeout=60)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self._server.server_port

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # ----------------------------------------------------------------------------------------------- answers
    def _answer(self, h, *, body: bool) -> None:
        path = h.path.split("?", 1)[0]
        seen = Seen(h.command, h.headers.get("Host", ""), h.path, h.headers.get("Range"), h.headers.get("Origin"))
        self.seen.append(seen)
        if path.startswith(STORAGE_PATH):
            data = self.blobs.get(path[len(STORAGE_PATH):])
            if data is None:
                return self._send(h, seen, 404, {"X-Error-Code": "EntryNotFound"}, b"", body)
            return self._bytes(h, seen, data, body)
        parts = path.lstrip("/").split("/", 4)
        if len(parts) < 5 or parts[2] != "resolve":
            return self._send(h, seen, 404, {}, b"", body)
        repo, revision, file = f"{parts[0]}/{parts[1]}", parts[3], parts[4]
        revisions = {rev: files for (r, rev), files in self.repos.items() if r == repo}
        if not revisions:
            return self._send(h, seen, 401, {"X-Error-Code": "RepoNotFound"}, b"", body)
        files = revisions.get(revision) or (next(iter(revisions.values())) if revision == "main" else None)
        if files is None:
            return self._send(h, seen, 404, {"X-Error-Code": "RevisionNotFound"}, b"", body)
        commit = revision if revision != "main" else next(rev for (r, rev) in self.repos if r == repo)
        if file not in files:
            return self._send(h, seen, 404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit}, b"", body)
        data = files[file]
        sha = hashlib.sha256(data).hexdigest()
        if file.endswith(self.lfs):  # stored in large-file storage: the Hub sends the client there
            location = f"{self.storage}{STORAGE_PATH}{sha}?X-Amz-Expires=3600"
            return self._send(h, seen, 302, {"Location": location, "X-Repo-Commit": commit, "X-Linked-Etag": f'"{sha}"',
                                             "X-Linked-Size": str(len(data))}, b"", body)
        return self._bytes(h, seen, data, body, {"X-Repo-Commit": commit, "ETag": f'"{sha[:40]}"'})

    def _bytes(self, h, seen: Seen, data: bytes, body: bool, extra: dict | None = None) -> None:
        headers = {**(extra or {}), "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"}
        asked = h.headers.get("Range")
        if asked and asked.startswith("bytes="):
            first, _, last = asked[len("bytes="):].partition("-")
            first, last = int(first), min(int(last or len(data) - 1), len(data) - 1)
            headers["Content-Range"] = f"bytes {first}-{last}/{len(data)}"
            return self._send(h, seen, 206, headers, data[first:last + 1], body)
        return self._send(h, seen, 200, headers, data, body)

    @staticmethod
    def _send(h, seen: Seen, status: int, headers: dict, data: bytes, body: bool) -> None:
        seen.status = status
        h.send_response(status)
        for k, v in {**CORS, **headers, "Content-Length": str(len(data))}.items():
            h.send_header(k, v)
        h.end_headers()
        if body:
            h.wfile.write(data)
