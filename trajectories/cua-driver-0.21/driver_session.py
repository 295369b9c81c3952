"""One stdio MCP session with a driver binary, for the record_*.py scripts beside it:
`session = DriverSession(binary, client_name)`, then `session.call(tool, arguments)`."""
import json
import select
import subprocess
import time


class DriverSession:
    def __init__(self, binary, client_name):
        self.server = subprocess.Popen([binary, "mcp"], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                       text=True)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": client_name, "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.server.stdin.write(json.dumps(message) + "\n")
        self.server.stdin.flush()

    def request(self, method, params=None, timeout=60):
        """One JSON-RPC request and its answer, waited for at most `timeout` seconds."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        deadline = time.time() + timeout
        while time.time() < deadline:
            ready, _, _ = select.select([self.server.stdout], [], [], 0.5)
            if ready:
                answer = json.loads(self.server.stdout.readline())
                if answer.get("id") == self.next_id:
                    return answer
        raise TimeoutError(method)

    def call(self, tool, arguments):
        return self.request("tools/call", {"name": tool, "arguments": arguments})["result"]

    def close(self):
        self.server.kill()
