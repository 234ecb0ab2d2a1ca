// Loaded with `node --require` before a test server starts. Servers that call
// listen(port) without a host (or with "::" / "0.0.0.0") would accept
// connections from every interface; the tests only ever reach them on
// 127.0.0.1, so that is the only address they get.
//
// The hook is net.Server's internal _listen2, the step that creates the
// listening handle once the address is known. Rewriting the address there,
// rather than wrapping listen() with a DNS lookup, keeps binding synchronous:
// server.address() answers right after listen() returns, as it does unpatched.
"use strict";

const net = require("node:net");

const WILDCARDS = new Set(["::", "0.0.0.0"]);
const bindHandle = net.Server.prototype._listen2;

function isTcpWildcard(address, port, fd) {
  // An inherited file descriptor is already bound; a pipe path arrives as the address.
  if (typeof fd === "number" && fd >= 0) return false;
  if (port === undefined || port === null || port < 0) return false;
  return address === undefined || address === null || WILDCARDS.has(address);
}

net.Server.prototype._listen2 = function listenOnLoopback(address, port, addressType, backlog, fd, flags) {
  if (isTcpWildcard(address, port, fd)) {
    return bindHandle.call(this, "127.0.0.1", port, 4, backlog, fd, flags);
  }
  return bindHandle.call(this, address, port, addressType, backlog, fd, flags);
};
