// MCP Apps: the host side of the extension's JSON-RPC protocol over postMessage.
export function receive(frame, message) {
  void frame;
  void message;
}
