package testbed

import (
	"io"
	"net"
	"sync"
)

// relay copies TCP connections accepted on one address to another: the
// pods' way to a test bed server that listens on 127.0.0.1 alone.
type relay struct {
	listener net.Listener
	target   string
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
}

func startRelay(listen, target string) (*relay, error) {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	r := &relay{listener: l, target: target, conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

func (r *relay) addr() string { return r.listener.Addr().String() }

func (r *relay) serve() {
	defer r.wg.Done()
	for {
		in, err := r.listener.Accept()
		if err != nil {
			return // closed
		}
		r.wg.Add(1)
		go r.pipe(in)
	}
}

func (r *relay) pipe(in net.Conn) {
	defer r.wg.Done()
	out, err := net.Dial("tcp", r.target)
	if err != nil {
		_ = in.Close()
		return
	}
	if !r.track(in, out) {
		return
	}
	done := make(chan struct{}, 2)
	copyHalf := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// The other direction may still carry the reply; close only
		// what this one writes to.
		if tcp, ok := dst.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
		done <- struct{}{}
	}
	go copyHalf(out, in)
	go copyHalf(in, out)
	<-done
	<-done
	r.untrack(in, out)
}

// track records a connection pair so close can end it; false when the relay
// is already closed (both are then closed).
func (r *relay) track(conns ...net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		r.conns[c] = struct{}{}
	}
	return true
}

func (r *relay) untrack(conns ...net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(r.conns, c)
	}
}

// close stops accepting, ends every open connection and waits for the
// copies to return.
func (r *relay) close() {
	_ = r.listener.Close()
	r.mu.Lock()
	for c := range r.conns {
		_ = c.Close()
	}
	r.conns = nil
	r.mu.Unlock()
	r.wg.Wait()
}
