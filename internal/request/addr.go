package request

import "net"

// NodeAddr formats a client address as node formats socket.remoteAddress (ip) and Mountebank's
// socketName (from, "ip:port"). With plainIPv4, IPv4 clients read a.b.c.d rather than
// ::ffff:a.b.c.d, as node reports them on a socket bound to an IPv4 address.
func NodeAddr(a net.Addr, plainIPv4 bool) (ip, from string) { return nodeAddr(a, plainIPv4) }
