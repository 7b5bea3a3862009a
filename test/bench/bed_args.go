package bench

// largeLandscape is the number of shoots from which the test bed's API
// server is started as APIServerArgs says.
const largeLandscape = 50000

// APIServerArgs are the kube-apiserver flags the test bed needs to hold the
// largest of sizes; none up to L.
//
// Beyond 50,000 shoots the API server runs without its watch cache. It
// serves shoots as a custom resource, so it keeps them as decoded JSON maps,
// about 100 KB of heap per shoot: 10 GB at XL, more than a benchmark machine
// can be asked for beside etcd and the rest. What the run and the floor
// read barely changes: with the cache, only a list's first page comes from
// it (etcd 3.5 lets the API server confirm the cache is current), and its
// continue pages come from etcd, as the test bed serves none from cache
// snapshots. What changes is that serve's informers and KEB's live paths
// read from etcd too.
//
// The API server's compaction of etcd is turned off as well: listing
// 100,000 shoots takes this test bed minutes, and a compaction meanwhile
// would expire the list's continue token (410 Gone), which the job answers
// by listing again from the start but the floor cannot. Meanwhile only the
// API server's own lease updates are written, so etcd's history stays small.
func APIServerArgs(sizes []Size) []string {
	for _, s := range sizes {
		if s.Shoots > largeLandscape {
			return []string{"--watch-cache=false", "--etcd-compaction-interval=0"}
		}
	}
	return nil
}
