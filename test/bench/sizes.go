// Package bench measures hap-reconciler on generated landscapes loaded into
// the real test bed: the full `run` as a child process against the floor of
// merely fetching its inputs, KEB's live provisioning path against the
// one-query read path, and the steady-state cycle of `serve` on watched
// Gardener lists. cmd/hap-bench is its command; `make bench` runs it.
package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// Size is one landscape the benchmark loads, named by its number of shoots.
type Size struct {
	Name   string `json:"name"`
	Shoots int    `json:"targetShoots"`
	// Repeats, when set, caps the measured run/floor pairs below
	// Options.Repeats, for a landscape where one pair takes long.
	Repeats int `json:"maxRepeats,omitempty"`
}

// repeats is how many run/floor pairs to measure at s.
func (s Size) repeats(asked int) int {
	if s.Repeats > 0 {
		return min(asked, s.Repeats)
	}
	return asked
}

// namedSizes are the landscapes docs/benchmarks.md reports. At XL one run
// and its floor take about 8 minutes on 2 cores, so it measures 3 pairs
// instead of 5.
var namedSizes = map[string]Size{
	"S":  {Name: "S", Shoots: 2000},
	"M":  {Name: "M", Shoots: 10000},
	"L":  {Name: "L", Shoots: 20000},
	"XL": {Name: "XL", Shoots: 100000, Repeats: 3},
}

// ParseSizes reads a comma-separated list such as "S,M,L". A plain number
// ("200") is a custom size, which tests use to stay small.
func ParseSizes(list string) ([]Size, error) {
	var sizes []Size
	for _, field := range strings.Split(list, ",") {
		name := strings.ToUpper(strings.TrimSpace(field))
		if name == "" {
			continue
		}
		if s, ok := namedSizes[name]; ok {
			sizes = append(sizes, s)
			continue
		}
		n, err := strconv.Atoi(name)
		if err != nil || n < 10 {
			return nil, fmt.Errorf("size %q: want S, M, L, XL or a number of shoots of at least 10", field)
		}
		sizes = append(sizes, Size{Name: name, Shoots: n})
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("sizes %q: name at least one of S, M, L, XL", list)
	}
	return sizes, nil
}

// historyPerShoot is how many deleted instance rows the benchmark adds per
// shoot on top of the generator's own history (about one per cluster):
// KEB keeps every deleted instance, so its table holds several rows per
// running cluster, and the aggregate scans them all.
const historyPerShoot = 2

// pilotGlobalAccounts sizes a small landscape to learn how many shoots one
// global account brings, so a size's landscape can be generated in one go.
const pilotGlobalAccounts = 200

// Generate builds the landscape for size: global accounts are added until
// it holds at least size.Shoots shoots, then deleted history is added to KEB's
// table.
func Generate(size Size, seed uint64) *landscape.Landscape {
	pilot := landscape.Generate(landscape.Options{Seed: seed, GlobalAccounts: pilotGlobalAccounts})
	perGA := float64(len(pilot.Shoots)) / pilotGlobalAccounts
	gas := int(math.Ceil(float64(size.Shoots) / perGA))
	for {
		l := landscape.Generate(landscape.Options{Seed: seed, GlobalAccounts: gas})
		if len(l.Shoots) >= size.Shoots {
			addDeletedHistory(l, historyPerShoot)
			return l
		}
		gas += max(1, gas/50)
	}
}

// addDeletedHistory adds perShoot deleted instances on the binding of each
// shoot's active instance: clusters that ran there before and were removed.
func addDeletedHistory(l *landscape.Landscape, perShoot int) {
	var active []*landscape.Instance
	for _, i := range l.Instances {
		if i.Active() && i.SubscriptionSecretName != "" {
			active = append(active, i)
		}
	}
	for n, i := range active {
		for k := range perShoot {
			old := *i
			old.InstanceID = fmt.Sprintf("deleted-%08d-%d", n, k)
			old.RuntimeID = fmt.Sprintf("deleted-runtime-%08d-%d", n, k)
			old.CreatedAt = i.CreatedAt.Add(-time.Duration(30*(k+1)) * 24 * time.Hour)
			old.DeletedAt = old.CreatedAt.Add(time.Duration(7+n%60) * 24 * time.Hour)
			old.UpdatedAt = old.DeletedAt
			l.AddInstance(old)
		}
	}
}
