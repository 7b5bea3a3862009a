package differential

import (
	"sync"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning"
)

// changes records when the stream last changed each binding in Gardener
// (KEB's claims and free steps, operators' labels, the cleanup), so that a
// pick the table answered without Gardener's confirmation can be judged
// against what the table had seen: a change after its mark is one the
// table could not know of.
type changes struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (c *changes) changed(binding string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[string]time.Time{}
	}
	c.at[binding] = time.Now()
}

// unseenBy says whether the table answered pick at answeredAt without
// Gardener's confirmation, and one of bindings changed in Gardener after
// the table had last seen Gardener: the window the trusted table accepts
// (provisioning.Client.SeenWithin), as KEB's live path accepts one between
// its list and the shoot. answeredAt is taken after the pick returned, so
// the mark it derives is never earlier than the table's own: an answer
// found unseen here really was.
func (c *changes) unseenBy(pick provisioning.Pick, answeredAt time.Time, bindings ...string) bool {
	ago, known := pick.SeenAgo()
	if pick.Confirmed || !known {
		return false
	}
	seenAt := answeredAt.Add(-ago)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range bindings {
		if c.at[b].After(seenAt) {
			return true
		}
	}
	return false
}
