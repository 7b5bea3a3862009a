package rules

import (
	"sort"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// PoolRules is a pool some entries can send runtimes to, with those entries
// (hap.NamedPool, the shape the pool view reads).
type PoolRules = hap.NamedPool

// Pools returns, for every pool some entry can name, the entries that name it.
//
// An entry names one pool per provider its plan can run on (trial: aws, azure
// and gcp, as a trial request may pick; free: aws and azure; every other plan:
// its one provider). Where the entry's hyperscalerType has only fixed parts (no
// PR or HR output, or the output region is an input value too, as in
// gcp(PR=cf-sa30) -> PR) that pool is returned whether or not it exists. Where
// an output appends a region the entry does not fix (sap-converged-cloud -> HR)
// the entry can name a pool for any region; those are taken from existing: the
// pools whose euAccess is the entry's and whose hyperscalerType is the
// provider type followed by one "_<region>" per appended region, a region
// being a non-empty text without "_" (no platform or hyperscaler region has
// one). An entry of a plan the plan table does not have names no pool: its
// provider is unknown. The result is sorted by hyperscalerType, euAccess,
// then shared.
func (rs RuleSet) Pools(existing []hap.Pool) []PoolRules {
	type target struct {
		pool   hap.Pool
		shared bool
	}
	at := map[target]int{} // where in out the target is
	var out []PoolRules
	add := func(pool hap.Pool, shared bool, r Rule) {
		rule := r.Text
		i, seen := at[target{pool, shared}]
		if !seen {
			i = len(out)
			at[target{pool, shared}] = i
			out = append(out, PoolRules{Pool: pool, Shared: shared, Unreachable: true})
		}
		out[i].Unreachable = out[i].Unreachable && len(r.starInputs()) > 0
		// existing may list a pool twice; an entry still leads there once.
		if rules := out[i].Rules; len(rules) == 0 || rules[len(rules)-1] != rule {
			out[i].Rules = append(out[i].Rules, rule)
		}
	}
	for _, r := range rs.rules {
		for _, provider := range possibleProviders(r.Plan) {
			pattern := r.typePattern(provider)
			if !pattern.open() {
				add(hap.Pool{HyperscalerType: pattern.fixed(), EUAccess: r.EUAccess}, r.Shared, r)
				continue
			}
			for _, pool := range existing {
				if pool.EUAccess == r.EUAccess && pattern.matches(pool.HyperscalerType) {
					add(pool, r.Shared, r)
				}
			}
		}
	}
	sort.Slice(out, func(a, b int) bool {
		pa, pb := out[a], out[b]
		if pa.Pool.HyperscalerType != pb.Pool.HyperscalerType {
			return pa.Pool.HyperscalerType < pb.Pool.HyperscalerType
		}
		if pa.Pool.EUAccess != pb.Pool.EUAccess {
			return !pa.Pool.EUAccess
		}
		return !pa.Shared && pb.Shared
	})
	return out
}

// typePattern is a hyperscalerType with holes: its parts, joined by "_"; an
// empty part stands for any region.
type typePattern []string

func (r Rule) typePattern(provider string) typePattern {
	p := typePattern{provider}
	if r.AppendPlatformRegion {
		p = append(p, r.PlatformRegion)
	}
	if r.AppendHyperscalerRegion {
		p = append(p, r.HyperscalerRegion)
	}
	return p
}

func (p typePattern) open() bool {
	for _, part := range p {
		if part == "" {
			return true
		}
	}
	return false
}

func (p typePattern) fixed() string { return strings.Join(p, "_") }

// matches reports whether hyperscalerType fills the pattern's holes with
// regions (non-empty, without "_").
func (p typePattern) matches(hyperscalerType string) bool {
	rest := hyperscalerType
	for i, part := range p {
		if i > 0 {
			var ok bool
			if rest, ok = strings.CutPrefix(rest, "_"); !ok {
				return false
			}
		}
		if part != "" {
			var ok bool
			if rest, ok = strings.CutPrefix(rest, part); !ok {
				return false
			}
			continue
		}
		end := strings.IndexByte(rest, '_')
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			return false
		}
		rest = rest[end:]
	}
	return rest == ""
}
