package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// lockedWriter lets the narration, the job's logs and progress tickers
// share one output.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// narrator tells the user what the demo does, step by step.
type narrator struct{ out io.Writer }

// step starts a new part of the story.
func (n narrator) step(format string, args ...any) {
	fmt.Fprintf(n.out, "\n==> "+format+"\n", args...)
}

// note adds a line to the current step.
func (n narrator) note(format string, args ...any) {
	fmt.Fprintf(n.out, "    "+format+"\n", args...)
}

// tickEvery is how often a long step says it is still going.
const tickEvery = 15 * time.Second

// ticking says every tickEvery that what is still going, until stop is
// called: a long step must not look like a hang.
func (n narrator) ticking(what string) (stop func()) {
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(tickEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				n.note("still %s (%s)", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// counter reports a count of done out of total at each quarter.
func (n narrator) counter(what string) func(done, total int) {
	return func(done, total int) {
		quarter := max(total/4, 1)
		if done%quarter == 0 || done == total {
			n.note("%s %d/%d", what, done, total)
		}
	}
}
