package reliability

import (
	"net"
	"sync"
	"testing"
)

// tcpProxy stands between the job and PostgreSQL and cuts connections in
// the middle of what they carry, in either direction: the next bytes
// flowing the chosen way are passed on in part, then both ends are closed,
// as a failing network or load balancer does.
type tcpProxy struct {
	listener net.Listener
	upstream string

	mu    sync.Mutex
	conns map[*proxiedConn]bool
}

// Directions a connection is cut in.
const (
	toServer = iota // the job's statement is cut
	toClient        // the server's answer is cut
)

type proxiedConn struct {
	client, server net.Conn
	once           sync.Once
	mu             sync.Mutex
	cut            [2]bool // armed, per direction
}

func (c *proxiedConn) close() {
	c.once.Do(func() {
		_ = c.client.Close()
		_ = c.server.Close()
	})
}

func (c *proxiedConn) armed(direction int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut[direction]
}

// newTCPProxy listens on a free local port and forwards to upstream until
// the test ends.
func newTCPProxy(t *testing.T, upstream string) *tcpProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{listener: l, upstream: upstream, conns: map[*proxiedConn]bool{}}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *tcpProxy) addr() string { return p.listener.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = client.Close()
			continue
		}
		c := &proxiedConn{client: client, server: server}
		p.mu.Lock()
		p.conns[c] = true
		p.mu.Unlock()
		go p.pipe(c, toServer)
		go p.pipe(c, toClient)
	}
}

// pipe copies one direction; when either end closes, both are closed, so a
// killed job's session ends on the server too (and frees its locks).
func (p *tcpProxy) pipe(c *proxiedConn, direction int) {
	from, to := c.client, c.server
	if direction == toClient {
		from, to = c.server, c.client
	}
	defer func() {
		c.close()
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			cut := c.armed(direction)
			if cut {
				chunk = chunk[:n/2] // part of a message: the other end reads a broken stream
			}
			if _, werr := to.Write(chunk); werr != nil || cut {
				return
			}
		}
		if err != nil {
			return // io.EOF or a broken end: either way the connection is over
		}
	}
}

// cutLive arms every live connection to be cut the next time bytes flow in
// direction; it returns how many it armed.
func (p *tcpProxy) cutLive(direction int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.mu.Lock()
		c.cut[direction] = true
		c.mu.Unlock()
	}
	return len(p.conns)
}

func (p *tcpProxy) close() {
	_ = p.listener.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.close()
	}
}
