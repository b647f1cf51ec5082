"""Calls that wait on the network release the GIL: the node they talk to here is a Python HTTP
server on a thread of this process, which can only answer while the call is not holding the GIL.
(Held, each call below would run into its timeout and raise Unavailable.)"""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import kvchaos


class FakeNode(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        port = self.server.server_address[1]
        answers = {
            "/api/GetClusterInfo": {"code": "OK", "self_id": "py", "leader_id": "py",
                                    "leader_endpoint": {"host": "127.0.0.1", "meta_http_port": port}},
            "/api/ListStorages": {"code": "OK", "storages": []},
        }
        answer = answers.get(self.path, {"code": "NotFound", "message": f"no call {self.path}"})
        body = json.dumps(answer).encode()
        self.send_response(200 if answer["code"] == "OK" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_node():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeNode)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_cluster_info_lets_python_threads_answer(fake_node):
    assert kvchaos.cluster_info(fake_node, timeout_ms=5000) == {"self_id": "py", "leader_id": "py",
                                                                 "leader_endpoint": {"host": "127.0.0.1",
                                                                                     "meta_http_port": int(fake_node.split(":")[1])}}


def test_leader_discovery_lets_python_threads_answer(fake_node):
    discovery = kvchaos.LeaderDiscovery([fake_node], max_attempts=1, request_timeout_ms=5000)
    assert discovery.leader() == fake_node
    assert discovery.call_leader("ListStorages") == {"code": "OK", "storages": []}
