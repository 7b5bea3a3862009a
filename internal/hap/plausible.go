package hap

import "fmt"

// minListedShare is the share of KEB's active instances on bindings that
// must sit on bindings Gardener lists for a picture to be believed. Real
// drift leaves a few instances on a binding that is gone; half of them gone
// at once is a wrong namespace, a wrong kubeconfig or a broken source.
const minListedShare = 0.5

// Implausible returns why a snapshot must change nothing, or "" when it can
// be believed: no job may decide on a namespace that lists no binding, or
// far fewer than KEB's database places its clusters in. On such a picture
// the candidate table would send every provisioning off to claim a new
// binding, the drift history would resolve real findings and open false
// ones (restarting the timers its alerts wait on), the release clocks would
// be lost and the pool metrics would show empty pools.
func Implausible(t *Tally) string {
	onBindings, onListed, listed := 0, 0, 0
	t.Each(func(u *Usage) {
		onBindings += u.Instances
		if u.Binding != nil {
			listed++
			onListed += u.Instances
		}
	})
	switch {
	case onBindings == 0:
		return ""
	case listed == 0:
		return fmt.Sprintf("Gardener lists no credentials binding while KEB's database has %d active instance(s) on bindings", onBindings)
	case float64(onListed) < minListedShare*float64(onBindings):
		return fmt.Sprintf("of the %d active instance(s) KEB's database places on bindings, only %d are on a binding Gardener lists (at least %.0f%% must be)",
			onBindings, onListed, minListedShare*100)
	}
	return ""
}
