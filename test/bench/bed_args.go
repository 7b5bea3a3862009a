package bench

import "github.com/kyma-project/hap-reconciler/test/testbed"

// largeLandscape is the number of shoots from which the test bed's API
// servers are started as ServerArgs says.
const largeLandscape = 50000

// ServerArgs are the flags both API servers need to hold the largest of
// sizes, the same for kube-apiserver and gardener-apiserver; none up to L.
//
// Beyond 50,000 shoots neither compacts etcd: listing 100,000 shoots takes
// the test bed minutes, and a compaction meanwhile would expire the list's
// continue token (410 Gone), which the job answers by listing again from
// the start but the floor cannot. Meanwhile only the API servers' own lease
// updates are written, so etcd's history stays small. Their watch caches
// stay on, as in production: gardener-apiserver keeps the shoots typed,
// and kube-apiserver holds no shoot at all.
func ServerArgs(sizes []Size) []string {
	for _, s := range sizes {
		if s.Shoots > largeLandscape {
			return []string{"--etcd-compaction-interval=0"}
		}
	}
	return nil
}

// BedOptions start the benchmark's test bed: Gardener's own
// gardener-apiserver behind kube-apiserver, both with ServerArgs.
func BedOptions(sizes []Size) []testbed.KubeOption {
	args := ServerArgs(sizes)
	return []testbed.KubeOption{testbed.WithAPIServerArgs(args...), testbed.WithGardenerAPIServerArgs(args...)}
}
