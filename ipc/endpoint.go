package ipc

import (
	"context"
	"fmt"
	"net"
	"strings"
)

// Endpoint is where a daemon listens or a client dials: a TCP address, a unix socket path,
// or a name in Linux's abstract socket namespace.
type Endpoint struct {
	Network string // "tcp" or "unix"
	Address string // host:port; an absolute path; or "@name" for the abstract namespace
}

// ParseEndpoint parses tcp://host:port, unix:///absolute/path or unix://@name.
func ParseEndpoint(s string) (Endpoint, error) {
	switch {
	case strings.HasPrefix(s, "tcp://"):
		addr := strings.TrimPrefix(s, "tcp://")
		host, port, err := net.SplitHostPort(addr)
		if err != nil || port == "" || strings.ContainsAny(addr, "/?#") {
			return Endpoint{}, fmt.Errorf("endpoint %q: want tcp://host:port", s)
		}
		_ = host
		return Endpoint{Network: "tcp", Address: addr}, nil
	case strings.HasPrefix(s, "unix://@"):
		name := strings.TrimPrefix(s, "unix://")
		if len(name) < 2 || len(name) > 107 {
			return Endpoint{}, fmt.Errorf("endpoint %q: abstract name must be 1..106 bytes", s)
		}
		return Endpoint{Network: "unix", Address: name}, nil
	case strings.HasPrefix(s, "unix:///"):
		path := strings.TrimPrefix(s, "unix://")
		if len(path) > 107 {
			return Endpoint{}, fmt.Errorf("endpoint %q: socket path longer than 107 bytes", s)
		}
		return Endpoint{Network: "unix", Address: path}, nil
	}
	return Endpoint{}, fmt.Errorf("endpoint %q: want tcp://host:port, unix:///absolute/path or unix://@abstract-name", s)
}

// String returns the endpoint as a URL that ParseEndpoint accepts.
func (e Endpoint) String() string {
	if e.Network == "unix" {
		return "unix://" + e.Address
	}
	return e.Network + "://" + e.Address
}

// Abstract reports whether the endpoint is in the Linux abstract namespace.
func (e Endpoint) Abstract() bool { return e.Network == "unix" && strings.HasPrefix(e.Address, "@") }

// Host returns the host part of a TCP endpoint ("" for unix).
func (e Endpoint) Host() string {
	if e.Network != "tcp" {
		return ""
	}
	host, _, _ := net.SplitHostPort(e.Address)
	return host
}

// Dial opens a raw connection to e (no handshake), with the socket options the link sets
// (a larger send buffer on unix sockets).
func Dial(ctx context.Context, e Endpoint) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, e.Network, e.Address)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", e, err)
	}
	tuneSocket(nc)
	return nc, nil
}

// IsLocalHost reports whether host names this machine: a loopback address, "localhost", or
// one of the addresses of this host's interfaces. Names are resolved with ctx.
func IsLocalHost(ctx context.Context, host string) (bool, error) {
	if host == "" {
		return false, fmt.Errorf("empty host")
	}
	var ips []net.IP
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		ips = []net.IP{ip}
	} else {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return false, fmt.Errorf("resolve %s: %w", host, err)
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	if len(ips) == 0 {
		return false, nil
	}
	var own []net.IP
	ifAddrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range ifAddrs {
			if n, ok := a.(*net.IPNet); ok {
				own = append(own, n.IP)
			}
		}
	}
	for _, ip := range ips {
		if !ip.IsLoopback() && !containsIP(own, ip) {
			return false, nil
		}
	}
	return true, nil
}

func containsIP(list []net.IP, ip net.IP) bool {
	for _, x := range list {
		if x.Equal(ip) {
			return true
		}
	}
	return false
}

// isLoopbackListenHost reports whether a TCP listen host only accepts local connections.
func isLoopbackListenHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
