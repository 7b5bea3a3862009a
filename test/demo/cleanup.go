package main

import "errors"

// cleanups undo what the demo started, newest first, and say so: the demo
// leaves no process and no directory behind, also after Ctrl-C.
type cleanups struct {
	steps []cleanupStep
}

type cleanupStep struct {
	done string // what the user is told once it is undone
	undo func() error
}

func (c *cleanups) add(done string, undo func() error) {
	c.steps = append(c.steps, cleanupStep{done: done, undo: undo})
}

func (c *cleanups) run(n narrator) error {
	if len(c.steps) == 0 {
		return nil
	}
	n.step("Cleaning up")
	var errs []error
	for i := len(c.steps) - 1; i >= 0; i-- {
		s := c.steps[i]
		if err := s.undo(); err != nil {
			errs = append(errs, err)
			n.note("FAILED: %s: %v", s.done, err)
			continue
		}
		n.note("%s", s.done)
	}
	c.steps = nil
	return errors.Join(errs...)
}
